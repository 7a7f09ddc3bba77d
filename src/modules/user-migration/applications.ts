import { AppError } from '../../http/errors.ts';
import { iso } from '../../lib/time.ts';
import { newId } from '../../lib/crypto.ts';
import { isUuid } from '../../lib/pg-errors.ts';
import type { Db } from '../../storage/db.ts';
import type { TenantsService } from '../tenants/index.ts';
import type { ApplicationsQuery, AssignUsersBody, CreateApplication } from './schema.ts';
import * as store from './store.ts';
import { createApplicationsAdmin } from './applications-admin.ts';
import { createApplicationCredentials } from './application-credentials.ts';

export const toApplication = (r: store.ApplicationRow) => ({
  id: r.id,
  vendorId: r.vendor_id,
  name: r.name,
  appURL: r.app_url,
  loginURL: r.login_url,
  logoURL: r.logo_url,
  accessType: r.access_type,
  type: r.app_type,
  ...(r.frontend_stack !== null ? { frontendStack: r.frontend_stack } : {}),
  isDefault: r.is_default,
  autoAssign: r.auto_assign,
  isActive: r.is_active,
  description: r.description,
  metadata: r.metadata,
  appHost: r.app_host,
  allowDcr: r.allow_dcr,
  redirectUris: r.redirect_uris,
  isFirstParty: r.is_first_party,
  createdAt: iso(r.created_at)!,
  updatedAt: iso(r.updated_at)!,
});

const MAX_IDS = 200;

/** The list filters as the store takes them; `ids` entries may be comma lists. */
function filterOf(query: ApplicationsQuery): store.ApplicationFilter {
  const ids = query.ids
    ?.flatMap((s) => s.split(','))
    .map((s) => s.trim())
    .filter(Boolean);
  if (ids && ids.length > MAX_IDS)
    throw new AppError('VALIDATION', `querystring.ids names ${ids.length} applications; at most ${MAX_IDS}`);
  return {
    accessType: query._accessType,
    isDefault: query._isDefault,
    isActive: query._isActive,
    ids: ids?.map((i) => i.toLowerCase()),
    type: query.type,
  };
}

export type ApplicationsService = ReturnType<typeof createApplicationsService>;

/**
 * The applications of the environment, kept small: a default one (seeded by the migration), others created here, and
 * which users of which account may use each. Migrated users go to the default and auto-assign applications only.
 */
export function createApplicationsService(deps: { db: Db; tenants: Pick<TenantsService, 'liveIds'> }) {
  const { db } = deps;
  async function requireApp(q: Db, id: string) {
    const app = isUuid(id) ? await store.findApplication(q, id) : undefined;
    if (!app) throw new AppError('APPLICATION_NOT_FOUND', `No application with id ${id.slice(0, 64)}`);
    return app;
  }
  return {
    list: async (query: ApplicationsQuery = {}) =>
      (await store.listApplications(db, filterOf(query))).map(toApplication),
    async default() {
      const [found] = await store.listApplications(db, { isDefault: true });
      if (!found) throw new AppError('APPLICATION_NOT_FOUND', 'The environment has no default application');
      return toApplication(found);
    },
    async create(body: CreateApplication) {
      return db.transaction(async (tx) =>
        toApplication(
          await store.insertApplication(tx, {
            id: newId(),
            name: body.name,
            app_url: body.appURL ?? '',
            login_url: body.loginURL ?? '',
            logo_url: body.logoURL ?? '',
            access_type: body.accessType ?? 'FREE_ACCESS',
            app_type: body.type ?? 'web',
            frontend_stack: body.frontendStack ?? null,
            is_default: body.isDefault ?? false,
            auto_assign: body.autoAssign ?? false,
            is_active: body.isActive ?? true,
            description: body.description ?? '',
            metadata: (body.metadata ?? {}) as Record<string, unknown>,
            app_host: body.appHost ?? '',
            allow_dcr: body.allowDcr ?? false,
            redirect_uris: body.redirectUris ?? [],
            is_first_party: body.isFirstParty ?? true,
          }),
        ),
      );
    },
    /** Members of `tenantId` among `userIds` get the application; others are skipped. */
    async assign(body: AssignUsersBody) {
      return db.transaction(async (tx) => {
        await requireApp(tx, body.appId);
        const ids = body.userIds.filter(isUuid);
        const rows = await store.assignUsers(tx, body.appId, body.tenantId, ids);
        return rows.map((r) => ({
          appId: body.appId,
          userTenantId: `${r.user_id}:${body.tenantId}`,
          userId: r.user_id,
          tenantId: body.tenantId,
          createdAt: iso(r.created_at)!,
        }));
      });
    },
    async unassign(body: AssignUsersBody) {
      await requireApp(db, body.appId);
      await store.unassignUsers(db, body.appId, body.tenantId, body.userIds.filter(isUuid));
    },
    async usersOf(appId: string) {
      await requireApp(db, appId);
      return store.usersOfApplication(db, appId);
    },
    appsOf: (userId: string) => (isUuid(userId) ? store.applicationsOfUser(db, userId) : Promise.resolve([])),
    /** One application, account assignments, active accounts, multi-id lookups (applications-admin.ts). */
    admin: createApplicationsAdmin({ db, tenants: deps.tenants, toApplication }),
    /** Client credentials and application clients (application-credentials.ts). */
    credentials: createApplicationCredentials({ db }),
  };
}
