/**
 * The environment's id as text, as a scalar subquery another module's statement selects (an application's
 * `vendorId`): read with the row it belongs to, in the same statement.
 */
export const environmentIdSql = '(SELECT e.id::text FROM environment e)';
