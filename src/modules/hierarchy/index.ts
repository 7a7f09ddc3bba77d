// PLACEHOLDER: being implemented.
import type { FastifyPluginAsync } from 'fastify';
import type { Db } from '../../storage/db.ts';
import type { TenantsService } from '../tenants/index.ts';
export function createHierarchyService(_deps: { db: Db; tenants: TenantsService }) { return {}; }
export type HierarchyService = ReturnType<typeof createHierarchyService>;
export const hierarchyRoutes: FastifyPluginAsync<{ hierarchy: HierarchyService }> = async () => {};
