/** The environment's settings (one row, column `settings`) as a scalar subquery of another module's statement. */
export const ENVIRONMENT_SETTINGS_SQL = 'SELECT settings FROM environment';
