/**
 * The sessions as a subquery of another module's statement (the IP lockout check of restrictions, given by the
 * composition root: the users module, which auth imports, imports restrictions). Columns: tenant_id, user_id, ip,
 * created_at.
 */
export const SESSIONS_SQL = 'SELECT tenant_id, user_id, ip, created_at FROM sessions';
