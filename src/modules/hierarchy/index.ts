export { createHierarchyService, MAX_DEPTH, type HierarchyService, type Actor } from './service.ts';
export { hierarchyRoutes } from './routes.ts';
export { HierarchyEntry, type TreeNode } from './schema.ts';
