/**
 * The role assignments through groups as a subquery of another module's statement: columns tenant_id, user_id,
 * role_id (a role once per group that gives it; the groups' enabled settings are not applied).
 */
export const GROUP_ROLE_ASSIGNMENTS_SQL = `SELECT gu.tenant_id, gu.user_id, gr.role_id FROM group_users gu
     JOIN group_roles gr ON gr.tenant_id = gu.tenant_id AND gr.group_id = gu.group_id`;
