import { newId, randomSecret, safeEqual, sha256Hex } from '../../lib/crypto.ts';
import { isUuid } from '../../lib/pg-errors.ts';
import { iso } from '../../lib/time.ts';
import { AppError } from '../../http/errors.ts';
import type { Db, Queryable } from '../../storage/db.ts';
import type { SessionsService } from '../auth/index.ts';
import type { EventsService } from '../events/index.ts';
import type { RolesService } from '../roles/index.ts';
import type { TenantsService } from '../tenants/index.ts';
import * as users from '../users/index.ts';
import * as store from './connections.store.ts';
import type { CreateConnection, GroupMappings, UpdateConnection } from './schema.ts';
import { createScimGroups } from './scim/groups.service.ts';
import * as scimStore from './scim/store.ts';
import { createSync } from './scim/sync.ts';
import { createScimUsers, type ScimCall } from './scim/users.service.ts';

export interface DirectoryDeps {
  db: Db;
  tenants: TenantsService;
  roles: RolesService;
  events: EventsService;
  sessions: SessionsService;
  publicUrl: string;
  scim: { maxResults: number; bodyLimit: number };
}

export type DirectoryService = ReturnType<typeof createDirectoryService>;

/** Token format: a prefix that names its kind (easy to spot in a leaked-secret scan) and 256 random bits. */
const newToken = () => `ghscim_${randomSecret(32)}`;

/** SCIM connections of accounts (interface 4.2) and the SCIM service each one serves. */
export function createDirectoryService(deps: DirectoryDeps) {
  const { db } = deps;
  const sync = createSync({ roles: deps.roles, tenants: deps.tenants, events: deps.events, sessions: deps.sessions });
  const scimUsers = createScimUsers({ db, sync, maxResults: deps.scim.maxResults });
  const scimGroups = createScimGroups({ db, sync, events: deps.events, maxResults: deps.scim.maxResults });

  const record = (r: store.ConnectionRow) => ({
    id: r.id,
    tenantId: r.tenant_id,
    connectionName: r.connection_name,
    source: r.source,
    syncToUserManagement: r.sync_to_user_management,
    // Never synced yet: the creation time (clients read lastSync as a required date-time).
    lastSync: iso(r.last_sync ?? r.created_at)!,
    createdAt: iso(r.created_at)!,
    metadata: r.metadata ?? {},
  });

  async function requireConnection(q: Queryable, tenantId: string, id: string, lock = false): Promise<store.ConnectionRow> {
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
      return record(await requireConnection(db, tenantId, id));
    },

    async list(filter: { tenantId?: string; source?: string; connectionName?: string; id?: string }) {
      return (await store.list(db, filter)).map(record);
    },

    /**
     * Switching sync on puts every directory user that is not yet a Gatehouse user into user management (users
     * without an email stay in the directory only). Switching it off keeps the users made so far; later changes
     * stay in the directory.
     */
    async update(tenantId: string, id: string, body: UpdateConnection): Promise<void> {
      await db.transaction(async (tx) => {
        const before = await requireConnection(tx, tenantId, id, true);
        const values: Parameters<typeof store.update>[3] = {};
        if (body.syncToUserManagement !== undefined) values.sync_to_user_management = body.syncToUserManagement;
        if (body.metadata !== undefined) values.metadata = body.metadata as Record<string, unknown>;
        if (body.connectionName !== undefined) values.connection_name = body.connectionName;
        await store.update(tx, tenantId, id, values);
        if (body.syncToUserManagement && !before.sync_to_user_management) {
          const after = { ...before, sync_to_user_management: true };
          for (const row of await scimStore.usersOfConnection(tx, scope(after), true)) await sync.materialise(tx, after, row, false);
        }
      });
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
      });
    },

    /** A new token; the old one stops working at once. */
    async rotateToken(tenantId: string, id: string) {
      const token = newToken();
      const c = await db.transaction(async (tx) => {
        const row = await requireConnection(tx, tenantId, id, true);
        await store.update(tx, tenantId, id, { token_hash: sha256Hex(token) });
        return row;
      });
      return { id: c.id, connectionName: c.connection_name, token };
    },

    async groupMappings(tenantId: string, id: string): Promise<GroupMappings> {
      return { mappings: (await requireConnection(db, tenantId, id)).group_roles };
    },

    /** Sets the group-to-role mapping and brings every synced user's mapped roles in line with it. */
    async setGroupMappings(tenantId: string, id: string, body: GroupMappings): Promise<GroupMappings> {
      const mappings = body.mappings.map((m) => ({ group: m.group.trim(), roleIds: [...new Set(m.roleIds)] }));
      return db.transaction(async (tx) => {
        const c = await requireConnection(tx, tenantId, id, true);
        await deps.roles.assertAssignable(tx, tenantId, [...new Set(mappings.flatMap((m) => m.roleIds))]);
        await store.update(tx, tenantId, id, { group_roles: mappings });
        const after = { ...c, group_roles: mappings };
        if (after.sync_to_user_management) await sync.recomputeRoles(tx, after, await scimStore.usersOfConnection(tx, scope(after)));
        return { mappings };
      });
    },

    /** The connection a SCIM call acts for: its id from the path and its token; 401 on anything else. */
    async authenticate(configId: string, token: string | undefined): Promise<ScimCall['connection']> {
      const c = token && isUuid(configId) ? await store.getById(db, configId) : undefined;
      if (!c || !token || !safeEqual(sha256Hex(token), c.token_hash)) throw new AppError('SCIM_INVALID_TOKEN');
      return c;
    },

    /** lastSync moves with every provisioning call (after it, outside its transaction: no lock held meanwhile). */
    async touch(c: store.ConnectionRow, write: boolean): Promise<void> {
      if (!write && c.last_sync && Date.now() - c.last_sync.getTime() < 1000) return;
      await store.touch(db, c.id);
    },

    forgetAccount: (q: Queryable, tenantId: string) => store.removeAccount(q, tenantId),
  };
}
