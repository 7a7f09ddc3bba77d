export { createDirectoryService, type DirectoryService } from './service.ts';
export { directoryRoutes } from './routes.ts';
export { scimRoutes, SCIM_PREFIX } from './scim/routes.ts';
