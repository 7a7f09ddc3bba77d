import { AppError } from '../../http/errors.ts';
import { isUuid } from '../../lib/pg-errors.ts';
import { iso } from '../../lib/time.ts';
import type { Db, Queryable } from '../../storage/db.ts';
import type { TenantsService } from '../tenants/index.ts';
import type { ActiveTenantsBody, AssignmentsQuery, UpdateApplication } from './applications-admin.schema.ts';
import * as admin from './applications-admin.store.ts';
import * as store from './store.ts';

/** Comma lists (or repeated parameters) as one list of trimmed ids; at most `max`. */
export function idList(field: string, values: string[] | undefined, max = 200): string[] | undefined {
  if (!values) return undefined;
  const ids = [
    ...new Set(
      values
        .flatMap((s) => s.split(','))
        .map((s) => s.trim())
        .filter(Boolean),
    ),
  ];
  if (ids.length > max) throw new AppError('VALIDATION', `${field} names ${ids.length} ids; at most ${max}`);
  return ids;
}

export async function requireApplication(q: Queryable, id: string): Promise<store.ApplicationRow> {
  const app = isUuid(id) ? await store.findApplication(q, id) : undefined;
  if (!app) throw new AppError('APPLICATION_NOT_FOUND', `No application with id ${id.slice(0, 64)}`);
  return app;
}

const toAssignment = (r: admin.AssignmentRow) => ({
  appId: r.app_id,
  tenantId: r.tenant_id,
  accessType: r.access_type,
  createdAt: iso(r.created_at)!,
  updatedAt: iso(r.updated_at)!,
});

/** Groups assignment rows by account, in account order. */
function byTenant<T>(
  rows: admin.AssignmentRow[],
  item: (r: admin.AssignmentRow) => T,
): { tenantId: string; items: T[] }[] {
  const out = new Map<string, T[]>();
  for (const r of rows) out.set(r.tenant_id, [...(out.get(r.tenant_id) ?? []), item(r)]);
  return [...out].map(([tenantId, items]) => ({ tenantId, items }));
}

export type ApplicationsAdmin = ReturnType<typeof createApplicationsAdmin>;

/**
 * Application management beyond list and create: one application (get, update, delete), which accounts may use it
 * (assignments with an access type each), a user's active account per application, and multi-id lookups of the
 * users-applications assignments. `toApplication` is the record mapper of applications.ts.
 */
export function createApplicationsAdmin<A>(deps: {
  db: Db;
  tenants: Pick<TenantsService, 'liveIds'>;
  toApplication: (r: store.ApplicationRow) => A;
}) {
  const { db, toApplication } = deps;

  async function assignmentsOf(query: AssignmentsQuery, scope: string | undefined) {
    const appIds = idList('querystring.appIds', query.appIds);
    let tenantIds = idList('querystring.tenantIds', query.tenantIds);
    if (scope) tenantIds = tenantIds ? tenantIds.filter((t) => t === scope) : [scope];
    return admin.listAssignments(db, {
      appIds: appIds?.map((i) => i.toLowerCase()),
      tenantIds,
      accessType: query.accessType,
    });
  }

  async function activeTenants(userId: string) {
    if (!isUuid(userId) || !(await admin.userExists(db, userId)))
      throw new AppError('USER_NOT_FOUND', `No user with id ${userId.slice(0, 64)}`);
    return {
      applicationActiveTenants: (await admin.activeTenants(db, userId)).map((r) => ({
        applicationId: r.app_id,
        tenantId: r.tenant_id,
      })),
    };
  }

  return {
    get: async (id: string) => toApplication(await requireApplication(db, id)),

    /** Partial update. `isDefault: true` moves the default here; the default cannot be unset (make another one the default). */
    async update(id: string, body: UpdateApplication) {
      return db.transaction(async (tx) => {
        await requireApplication(tx, id);
        const locked = await admin.lockApplication(tx, id);
        if (locked?.is_default && body.isDefault === false)
          throw new AppError(
            'DEFAULT_APPLICATION',
            'body.isDefault: the default application cannot stop being the default; set isDefault on another application instead',
          );
        await admin.updateApplication(tx, id, {
          name: body.name,
          app_url: body.appURL,
          login_url: body.loginURL,
          logo_url: body.logoURL,
          access_type: body.accessType,
          app_type: body.type,
          frontend_stack: body.frontendStack,
          is_default: body.isDefault,
          auto_assign: body.autoAssign,
          is_active: body.isActive,
          description: body.description,
          metadata: body.metadata as Record<string, unknown> | undefined,
          app_host: body.appHost,
          allow_dcr: body.allowDcr,
          redirect_uris: body.redirectUris,
          is_first_party: body.isFirstParty,
        });
        return toApplication(await requireApplication(tx, id));
      });
    },

    /** Deletes an application with its assignments, credentials and clients; the default one is refused (409). */
    async remove(id: string) {
      await db.transaction(async (tx) => {
        await requireApplication(tx, id);
        const locked = await admin.lockApplication(tx, id);
        if (locked?.is_default)
          throw new AppError(
            'DEFAULT_APPLICATION',
            `Application ${id} is the default application and cannot be deleted; make another application the default first`,
          );
        await admin.deleteApplication(tx, id);
      });
    },

    /** Assignments grouped by account; `scope` (a user token's account, or the tenant header) narrows to one account. */
    assignmentsV1: async (query: AssignmentsQuery, scope?: string) =>
      byTenant(await assignmentsOf(query, scope), (r) => r.app_id).map((g) => ({
        tenantId: g.tenantId,
        appIds: g.items,
      })),
    assignmentsV2: async (query: AssignmentsQuery, scope?: string) =>
      byTenant(await assignmentsOf(query, scope), (r) => ({ appId: r.app_id, accessType: r.access_type })).map((g) => ({
        tenantId: g.tenantId,
        assignments: g.items,
      })),

    async tenantsOf(appId: string) {
      await requireApplication(db, appId);
      return {
        tenantIds: (await admin.listAssignments(db, { appIds: [appId.toLowerCase()] })).map((r) => r.tenant_id),
      };
    },

    /** Assigns a live account (again: keeps the assignment, re-typed when accessType is given); answers the account's applications. */
    async assignTenant(appId: string, tenantId: string, accessType?: string) {
      return db.transaction(async (tx) => {
        const app = await requireApplication(tx, appId);
        if (!(await deps.tenants.liveIds(tx, [tenantId])).has(tenantId))
          throw new AppError('ACCOUNT_NOT_FOUND', `No account with body.tenantId ${tenantId}`);
        await admin.upsertAssignment(tx, app.id, tenantId, accessType ?? null, app.access_type);
        return { tenantId, appIds: (await admin.listAssignments(tx, { tenantIds: [tenantId] })).map((r) => r.app_id) };
      });
    },

    async editTenant(appId: string, tenantId: string, accessType: string) {
      await requireApplication(db, appId);
      const row = await admin.setAssignmentAccess(db, appId, tenantId, accessType);
      if (!row)
        throw new AppError(
          'APPLICATION_ASSIGNMENT_NOT_FOUND',
          `Account ${tenantId} is not assigned to application ${appId}`,
        );
      return toAssignment(row);
    },

    async unassignTenant(appId: string, tenantId: string) {
      await requireApplication(db, appId);
      if (!(await admin.deleteAssignment(db, appId, tenantId)))
        throw new AppError(
          'APPLICATION_ASSIGNMENT_NOT_FOUND',
          `Account ${tenantId} is not assigned to application ${appId}`,
        );
    },

    activeTenants,

    /**
     * Sets the user's active account in each listed application, all or nothing: the application must exist, the
     * user must be a member of the account, and a MANAGED_ACCESS application must be assigned to that account.
     */
    async switchActiveTenants(userId: string, body: ActiveTenantsBody) {
      const pairs = body.activeApplicationTenants.map((p, i) => ({
        i,
        appId: p.applicationId.toLowerCase(),
        tenantId: p.tenantId,
      }));
      const seen = new Set<string>();
      for (const p of pairs) {
        const field = `body.activeApplicationTenants[${p.i}]`;
        if (!isUuid(p.appId))
          throw new AppError(
            'APPLICATION_NOT_FOUND',
            `${field}.applicationId: no application with id ${p.appId.slice(0, 64)}`,
          );
        if (seen.has(p.appId))
          throw new AppError('VALIDATION', `${field}.applicationId: application ${p.appId} is listed twice`);
        seen.add(p.appId);
      }
      await db.transaction(async (tx) => {
        if (!isUuid(userId) || !(await admin.userExists(tx, userId)))
          throw new AppError('USER_NOT_FOUND', `No user with id ${userId.slice(0, 64)}`);
        const apps = await admin.applicationsByIds(
          tx,
          pairs.map((p) => p.appId),
        );
        const member = await admin.memberships(
          tx,
          userId,
          pairs.map((p) => p.tenantId),
        );
        for (const p of pairs) {
          const field = `body.activeApplicationTenants[${p.i}]`;
          const access = apps.get(p.appId);
          if (!access)
            throw new AppError('APPLICATION_NOT_FOUND', `${field}.applicationId: no application with id ${p.appId}`);
          if (!member.has(p.tenantId))
            throw new AppError('NOT_A_MEMBER', `${field}.tenantId: the user is not a member of account ${p.tenantId}`);
          if (access === 'MANAGED_ACCESS' && !(await admin.isAssigned(tx, p.appId, p.tenantId))) {
            throw new AppError(
              'APPLICATION_NOT_ASSIGNED',
              `${field}.tenantId: account ${p.tenantId} is not assigned to application ${p.appId} (MANAGED_ACCESS)`,
            );
          }
        }
        await admin.setActiveTenants(tx, userId, pairs);
      });
      return activeTenants(userId);
    },

    /** User ids of each asked application that exists, in the order asked. */
    async usersOfApps(appIds: string[]) {
      const ids = idList('querystring.appIds', appIds)!
        .map((i) => i.toLowerCase())
        .filter(isUuid);
      const rows = new Map((await admin.usersOfApplications(db, ids)).map((r) => [r.app_id, r.user_ids]));
      return ids.filter((i) => rows.has(i)).map((appId) => ({ appId, userIds: rows.get(appId)! }));
    },

    /** Application ids of each asked user that exists, in the order asked. */
    async appsOfUsers(userIds: string[]) {
      const ids = idList('querystring.userIds', userIds)!
        .map((i) => i.toLowerCase())
        .filter(isUuid);
      const rows = new Map((await admin.applicationsOfUsers(db, ids)).map((r) => [r.user_id, r.app_ids]));
      return ids.filter((i) => rows.has(i)).map((userId) => ({ userId, appIds: rows.get(userId)! }));
    },
  };
}
