export { createGroupsService, groupsOfUsers, type GroupsService } from './service.ts';
export { groupsRoutes } from './routes.ts';
export { Group, UserGroupSummary } from './schema.ts';
export { GROUP_ROLE_ASSIGNMENTS_SQL } from './assignments.sql.ts';
