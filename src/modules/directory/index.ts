export { createDirectoryService, type DirectoryService } from './service.ts';
export { directoryRoutes } from './routes.ts';
export { canonicalScimUrl, scimRoutes, SCIM_PREFIX } from './scim/routes.ts';
