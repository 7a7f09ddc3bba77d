export { createEnvironmentService, type EnvironmentService } from './service.ts';
export { environmentRoutes } from './routes.ts';
export type { VendorSettings } from './schema.ts';
