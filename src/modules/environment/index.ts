export { createEnvironmentService, type EnvironmentService } from './service.ts';
export { environmentRoutes } from './routes.ts';
export type { VendorSettings } from './schema.ts';
export { DEFAULT_SETTINGS } from './schema.ts';
export type { Channels, SignInFlows } from './login-box.ts';
export { assertAllowedRedirect } from './redirects.ts';
// The environment's id as SQL, for another module's statement that answers it with its rows.
export { environmentIdSql } from './id.sql.ts';
export { ENVIRONMENT_SETTINGS_SQL } from './settings.sql.ts';
export type { Branding } from './branding.ts';
