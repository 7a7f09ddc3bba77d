export { createEnvironmentService, type EnvironmentService } from './service.ts';
export { environmentRoutes } from './routes.ts';
export type { VendorSettings } from './schema.ts';
export { DEFAULT_SETTINGS } from './schema.ts';
export type { Channels } from './login-box.ts';
