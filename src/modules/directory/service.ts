import { newId, randomSecret, safeEqual, sha256Hex } from '../../lib/crypto.ts';
import { isUuid } from '../../lib/pg-errors.ts';
import { iso } from '../../lib/time.ts';
import { AppError } from '../../http/errors.ts';
import { latestJobs, type LatestJob } from '../../jobs/progress.ts';
import type { JobHandler, JobRunner } from '../../jobs/runner.ts';
import type { Db, Queryable } from '../../storage/db.ts';
import type { Invalidation } from '../../storage/invalidation.ts';
import type { SessionsService } from '../auth/index.ts';
import type { PasswordService } from '../credentials/index.ts';
import type { EventsService } from '../events/index.ts';
import type { Grantor, RolesService } from '../roles/index.ts';
import type { TenantsService } from '../tenants/index.ts';
import * as users from '../users/index.ts';
import * as store from './connections.store.ts';
import type { CreateConnection, GroupMappings, UpdateConnection } from './schema.ts';
import { createScimGroups } from './scim/groups.service.ts';
import * as scimStore from './scim/store.ts';
import { createSync } from './scim/sync.ts';
import { createScimUsers, type ScimCall } from './scim/users.service.ts';
import { syncJobHandler } from './sync-job.ts';

/**
 * The latest sync job of each connection (switching syncToUserManagement on enqueues one), its progress included. No
 * entry: no sync job on record (never switched on, or the finished job has been cleaned up).
 */
const syncJobs = (q: Queryable, ids: string[]) => latestJobs(q, store.SYNC_JOB, 'connectionId', ids);

export interface DirectoryDeps {
  db: Db;
  tenants: TenantsService;
  roles: RolesService;
  events: EventsService;
  sessions: SessionsService;
  /** Hashes the password a SCIM body sets for a user the connection owns. */
  passwords: PasswordService;
  jobs: Pick<JobRunner, 'enqueue' | 'notify'>;
  /** Directory users per transaction of the sync job (JOB_CHUNK_SIZE). */
  chunkSize: number;
  publicUrl: string;
  scim: { maxResults: number; bodyLimit: number };
  /** Cross-instance invalidation of the SCIM auth cache (src/storage/invalidation.ts). */
  invalidation?: Invalidation;
}

/** Invalidation topic of a SCIM connection's auth row (key: the connection id). */
export const SCIM_CONNECTION_TOPIC = 'directory.connection';

/**
 * How long this process trusts a connection row it read to authenticate SCIM calls (token hash and settings). Rotation,
 * deletion and updates drop the entry at once here and, notified, on the other processes; while notifications are
 * down another process's change is seen within this bound by reads. Writes never rely on it: they re-check the token and read the settings in their transaction.
 */
export const AUTH_CACHE_MS = 2_000;
/** lastSync is written at most once per this interval per connection (per process). */
export const LAST_SYNC_GRANULARITY_MS = 1_000;
const AUTH_CACHE_MAX = 10_000;

export type DirectoryService = ReturnType<typeof createDirectoryService>;

/** Token format: a prefix that names its kind (easy to spot in a leaked-secret scan) and 256 random bits. */
const newToken = () => `ghscim_${randomSecret(32)}`;

/** SCIM connections of accounts (interface 4.2) and the SCIM service each one serves. */
export function createDirectoryService(deps: DirectoryDeps) {
  const { db } = deps;
  const sync = createSync({
    roles: deps.roles,
    tenants: deps.tenants,
    events: deps.events,
    sessions: deps.sessions,
    passwords: deps.passwords,
  });

  // Auth cache: connection id → the row read to authenticate, until `expires`. Touched: this process's latest lastSync
  // update per connection, when it began and its outcome.
  const authCache = new Map<string, { row: store.ConnectionRow; expires: number }>();
  const touched = new Map<string, { startedAt: number; done: Promise<void> }>();
  const forget = (id: string) => {
    authCache.delete(id);
  };
  deps.invalidation?.subscribe(SCIM_CONNECTION_TOPIC, (id) => (id === undefined ? authCache.clear() : forget(id)));
  /** In a change's transaction: the other instances drop their cached row at its commit. */
  const notify = async (tx: Queryable, id: string) => deps.invalidation?.publish(tx, SCIM_CONNECTION_TOPIC, id);
  const scimUsers = createScimUsers({ db, sync, maxResults: deps.scim.maxResults, forget });
  const scimGroups = createScimGroups({ db, sync, events: deps.events, maxResults: deps.scim.maxResults, forget });

  /** The state of the latest sync job (switching syncToUserManagement on); `idle` when there is none on record. */
  const syncStatusOf = (j: LatestJob | undefined) => ({
    state: j?.state ?? ('idle' as const),
    processed: j?.processed ?? 0,
    ...(j ? { requestedAt: iso(j.created_at)!, completedAt: iso(j.completed_at) ?? null } : {}),
  });

  const record = (r: store.ConnectionRow, job: LatestJob | undefined) => ({
    id: r.id,
    tenantId: r.tenant_id,
    connectionName: r.connection_name,
    source: r.source,
    syncToUserManagement: r.sync_to_user_management,
    syncStatus: syncStatusOf(job),
    // Never synced yet: the creation time (clients read lastSync as a required date-time).
    lastSync: iso(r.last_sync ?? r.created_at)!,
    createdAt: iso(r.created_at)!,
    metadata: r.metadata ?? {},
  });

  async function requireConnection(
    q: Queryable,
    tenantId: string,
    id: string,
    lock = false,
  ): Promise<store.ConnectionRow> {
    const row = isUuid(id) ? await store.get(q, tenantId, id, lock) : undefined;
    if (!row) throw new AppError('SCIM_CONNECTION_NOT_FOUND', `No SCIM connection ${id} in account ${tenantId}`);
    return row;
  }

  const scope = (c: store.ConnectionRow): scimStore.Scope => ({ tenantId: c.tenant_id, connectionId: c.id });

  return {
    scimUsers,
    scimGroups,
    scim: deps.scim,

    async create(tenantId: string, body: CreateConnection) {
      const token = newToken();
      const row = await db.transaction(async (tx) => {
        await deps.tenants.requireLive(tx, tenantId);
        return store.insert(tx, {
          tenant_id: tenantId,
          id: newId(),
          connection_name: body.connectionName ?? '',
          source: body.source,
          sync_to_user_management: body.syncToUserManagement ?? true,
          metadata: (body.metadata ?? {}) as Record<string, unknown>,
          token_hash: sha256Hex(token),
        });
      });
      return { id: row.id, connectionName: row.connection_name, token };
    },

    async get(tenantId: string, id: string) {
      const row = await requireConnection(db, tenantId, id);
      return record(row, (await syncJobs(db, [row.id])).get(row.id));
    },

    async list(filter: { tenantId?: string; source?: string; connectionName?: string; id?: string }) {
      const rows = await store.list(db, filter);
      const jobs = await syncJobs(
        db,
        rows.map((r) => r.id),
      );
      return rows.map((r) => record(r, jobs.get(r.id)));
    },

    /**
     * Switching sync on enqueues the sync job (in the PATCH's transaction: it exists iff the switch committed), which
     * puts every directory user with an email into user management in chunks (see sync-job.ts); its progress is the
     * connection's `syncStatus`. Users without an email stay in the directory only. Switching it off keeps the users
     * made so far (a running job stops at its next chunk); later changes stay in the directory.
     */
    async update(tenantId: string, id: string, body: UpdateConnection): Promise<void> {
      const enqueued = await db.transaction(async (tx) => {
        const before = await requireConnection(tx, tenantId, id, true);
        const values: Parameters<typeof store.update>[3] = {};
        if (body.syncToUserManagement !== undefined) values.sync_to_user_management = body.syncToUserManagement;
        if (body.metadata !== undefined) values.metadata = body.metadata as Record<string, unknown>;
        if (body.connectionName !== undefined) values.connection_name = body.connectionName;
        await store.update(tx, tenantId, id, values);
        await notify(tx, id);
        if (!body.syncToUserManagement || before.sync_to_user_management) return false;
        await deps.jobs.enqueue(tx, {
          kind: store.SYNC_JOB,
          tenantId,
          payload: { tenantId, connectionId: id, processed: 0 },
        });
        return true;
      });
      forget(id);
      if (enqueued) deps.jobs.notify();
    },

    /** Removes the connection, its directory and (with deleteAll) the account memberships of the users it made. */
    async remove(tenantId: string, id: string, deleteAll: boolean): Promise<void> {
      await db.transaction(async (tx) => {
        const c = await requireConnection(tx, tenantId, id, true);
        for (const row of await scimStore.usersOfConnection(tx, scope(c))) {
          if (!row.owns_user || !row.user_id) continue;
          if (deleteAll) await sync.leave(tx, tenantId, row.user_id);
          else await users.updateUser(tx, row.user_id, { managed_by: 'gatehouse' });
        }
        await store.remove(tx, tenantId, id);
        await notify(tx, id);
      });
      forget(id);
    },

    /** A new token; the old one stops working at once. */
    async rotateToken(tenantId: string, id: string) {
      const token = newToken();
      const c = await db.transaction(async (tx) => {
        const row = await requireConnection(tx, tenantId, id, true);
        await store.update(tx, tenantId, id, { token_hash: sha256Hex(token) });
        await notify(tx, id);
        return row;
      });
      forget(id);
      return { id: c.id, connectionName: c.connection_name, token };
    },

    async groupMappings(tenantId: string, id: string): Promise<GroupMappings> {
      return { mappings: (await requireConnection(db, tenantId, id)).group_roles };
    },

    /**
     * Sets the group-to-role mapping and brings every synced user's mapped roles in line with it. The roles it gives,
     * and those it stops giving, must be within `by` (the one grant rule of the roles module).
     */
    async setGroupMappings(tenantId: string, id: string, body: GroupMappings, by: Grantor): Promise<GroupMappings> {
      const mappings = body.mappings.map((m) => ({ group: m.group.trim(), roleIds: [...new Set(m.roleIds)] }));
      return db
        .transaction(async (tx) => {
          const c = await requireConnection(tx, tenantId, id, true);
          const wanted = [...new Set(mappings.flatMap((m) => m.roleIds))];
          await deps.roles.assertAssignable(tx, tenantId, wanted);
          const before = new Set(c.group_roles.flatMap((m) => m.roleIds.map((r) => r.toLowerCase())));
          const after = new Set(wanted.map((r) => r.toLowerCase()));
          const added = wanted.filter((r) => !before.has(r.toLowerCase()));
          await deps.roles.assertGrantable(tx, tenantId, by, added, 'mappings');
          await deps.roles.assertRevocable(
            tx,
            tenantId,
            by,
            [...before].filter((r) => !after.has(r)),
            'mappings',
          );
          await store.update(tx, tenantId, id, { group_roles: mappings });
          await notify(tx, id);
          const next = { ...c, group_roles: mappings };
          if (next.sync_to_user_management)
            await sync.recomputeRoles(tx, next, await scimStore.usersOfConnection(tx, scope(next)));
          return { mappings };
        })
        .finally(() => forget(id));
    },

    /**
     * The call a SCIM request makes: the connection from its id and its token; 401 on anything else. The connection
     * row comes from the auth cache (AUTH_CACHE_MS) when this process read it lately and the token's hash matches;
     * otherwise (first call, expired, or a token that does not match the cached hash, e.g. rotated elsewhere) it is
     * read again. Nothing is cached for an unknown connection or a wrong token.
     */
    async authenticate(configId: string, token: string | undefined, base: (id: string) => string): Promise<ScimCall> {
      if (!token || !isUuid(configId)) throw new AppError('SCIM_INVALID_TOKEN');
      const tokenHash = sha256Hex(token);
      const now = Date.now();
      const hit = authCache.get(configId);
      if (hit && hit.expires > now && safeEqual(tokenHash, hit.row.token_hash))
        return { connection: hit.row, base: base(configId), tokenHash };
      const c = await store.getById(db, configId);
      if (!c || !safeEqual(tokenHash, c.token_hash)) {
        authCache.delete(configId);
        throw new AppError('SCIM_INVALID_TOKEN');
      }
      if (authCache.size >= AUTH_CACHE_MAX) authCache.clear();
      authCache.set(configId, { row: c, expires: now + AUTH_CACHE_MS });
      return { connection: c, base: base(configId), tokenHash };
    },

    /**
     * lastSync follows provisioning calls, written after the call and outside its transaction (no row lock held while
     * provisioning). A call is counted by any update that began after the call did: this process then waits for its
     * own such update instead of writing again, and the store skips the row when another instance already moved it.
     * Reads move it at most once per LAST_SYNC_GRANULARITY_MS per connection in this process.
     */
    async touch(c: store.ConnectionRow, write = false, since = Date.now()): Promise<void> {
      const now = Date.now();
      const last = touched.get(c.id);
      if (last && last.startedAt >= since) return last.done;
      if (!write && last && now - last.startedAt < LAST_SYNC_GRANULARITY_MS) return;
      if (touched.size >= AUTH_CACHE_MAX) touched.clear();
      const done = store.touch(db, c.id, new Date(since));
      touched.set(c.id, { startedAt: now, done: done.catch(() => void touched.delete(c.id)) });
      await done;
    },

    /** Job handlers (registered in src/context.ts). */
    jobs: { [store.SYNC_JOB]: syncJobHandler({ sync, chunkSize: deps.chunkSize }) } as Record<string, JobHandler>,

    forgetAccount: async (q: Queryable, tenantId: string) => {
      for (const [id, e] of authCache) if (e.row.tenant_id === tenantId) authCache.delete(id);
      await store.removeAccount(q, tenantId);
    },
  };
}
