// PLACEHOLDER: being implemented.
import type { FastifyPluginAsync } from 'fastify';
import type { Db } from '../../storage/db.ts';
import type { TenantsService } from '../tenants/index.ts';
export function createAccountSettingsService(_deps: { db: Db; tenants: TenantsService }) { return {}; }
export type AccountSettingsService = ReturnType<typeof createAccountSettingsService>;
export const accountSettingsRoutes: FastifyPluginAsync<{ accountSettings: AccountSettingsService }> = async () => {};
