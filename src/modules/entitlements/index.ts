export { createEntitlementsService, type EntitlementsService } from './service.ts';
export { entitlementsRoutes } from './routes.ts';
export * as engine from './engine/index.ts';
