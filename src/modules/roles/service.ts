import { AppError } from '../../http/errors.ts';
import { newId } from '../../lib/crypto.ts';
import type { Db, Queryable } from '../../storage/db.ts';
import type { TenantsService } from '../tenants/index.ts';
import {
  assertLevelWithin,
  assertPermissionsGrantable,
  assertRoleEditable,
  grantablePermission,
} from './account-writes.ts';
import { createGrants, grantorLevel, type Grantor } from './grants.ts';
import { createPermissionsService } from './permissions.service.ts';
import {
  checkName,
  checkText,
  missing,
  normalizeIds,
  repeated,
  toPermission,
  toRole,
  uniqueAs,
  unknownIds,
} from './records.ts';
import type {
  CreateAccountRole,
  CreateRole,
  PermissionRecord,
  RoleListQuery,
  RoleRecord,
  UpdateRole,
} from './schema.ts';
import * as store from './store.ts';

/**
 * The ids (column `id`) of the default roles of the account `tenantExpr`, in `defaultRoleIds`'s order, as a
 * subquery: the users module's batch creation reads them in the statement that reads its other facts.
 */
export const defaultRoleIdsSql = (tenantExpr: string): string => store.flaggedRoleIdsSql(tenantExpr, 'is_default');
import { createUserRolesLookup } from './user-roles.service.ts';
import type { UserTablesSql } from './user-roles.store.ts';

export interface RolesDeps {
  db: Db;
  /** The environment: its id is every role's `vendorId`. */
  environment: { readonly id: string };
  /** The users module's memberships and role assignments as subqueries (its `userTablesSql`): users imports roles. */
  userTables: UserTablesSql;
  /** Which accounts are live: a role of an account is written only while it is. */
  tenants: Pick<TenantsService, 'liveIds'>;
}

/** Who calls: the environment (vendor token) or a user acting on their own account with their permissions. */
export type Actor = Grantor;
const VENDOR: Actor = { kind: 'vendor' };

const ROLE_COLUMNS: Record<string, string> = {
  key: 'key',
  name: 'name',
  description: 'description',
  isDefault: 'is_default',
  firstUserRole: 'first_user_role',
  level: 'level',
};

export type RolesService = ReturnType<typeof createRolesService>;

export function createRolesService(deps: RolesDeps) {
  const { db, environment } = deps;
  const record = (r: store.RoleRow): RoleRecord => toRole(r, environment.id);

  /** 404 unless the id names a live account. */
  async function requireAccount(q: Queryable, tenantId: string, field = 'gatehouse-tenant-id'): Promise<void> {
    if (!(await deps.tenants.liveIds(q, [tenantId])).has(tenantId))
      throw new AppError('ACCOUNT_NOT_FOUND', `No account with ${field} ${tenantId}`);
  }

  /** A role visible in the scope (the environment's, or one of the account's); 404 otherwise. */
  async function requireRole(q: Queryable, roleId: string, scope?: string, lock = false): Promise<store.RoleRow> {
    const row = await store.findRole(q, roleId, lock);
    if (!row || (scope !== undefined && row.tenant_id !== null && row.tenant_id !== scope)) {
      throw new AppError(
        'ROLE_NOT_FOUND',
        `No role with id ${roleId}${scope !== undefined ? ` for account ${scope}` : ''}`,
      );
    }
    return row;
  }

  async function reload(q: Queryable, roleId: string): Promise<RoleRecord> {
    return record((await store.findRole(q, roleId))!);
  }

  /** Permission rows for ids of a body field; 400 naming those that do not exist. */
  async function requirePermissions(q: Queryable, ids: string[], field: string) {
    const rows = await store.permissionsByIds(q, ids);
    const unknown = missing(
      ids,
      rows.map((r) => r.id),
    );
    if (unknown.length) throw unknownIds(field, unknown, 'permissions');
    return rows;
  }

  function checkRoleText(body: { name?: string; description?: string }, at: string): void {
    checkName(body.name, `${at}name`);
    checkText(body.description, `${at}description`);
  }

  const permissions = createPermissionsService({ db, requireRoles: rolesInReach });

  /** Role rows for ids of a body field; 400 naming ids that do not exist or (with a scope) belong to another account. */
  async function rolesInReach(q: Queryable, ids: string[], field: string, scope?: string): Promise<store.RoleRow[]> {
    const rows = (await store.rolesByIds(q, ids)).filter(
      (r) => scope === undefined || r.tenant_id === null || r.tenant_id === scope,
    );
    const unknown = missing(
      ids,
      rows.map((r) => r.id),
    );
    if (unknown.length) throw unknownIds(field, unknown, 'roles');
    return rows;
  }

  return {
    ...permissions,
    ...createUserRolesLookup({ db, vendorId: () => environment.id, requireAccount, userTables: deps.userTables }),

    // -- the public surface for other modules (q may be a transaction) --

    /** Ids of the default roles an account's new user gets: the environment's and the account's own. */
    defaultRoleIds: (q: Queryable, tenantId: string): Promise<string[]> =>
      store.flaggedRoleIds(q, tenantId, 'is_default'),
    /** Ids of the roles the first user of an account gets. */
    firstUserRoleIds: (q: Queryable, tenantId: string): Promise<string[]> =>
      store.flaggedRoleIds(q, tenantId, 'first_user_role'),
    /** The ids among `roleIds` that still name a role assignable in the account (environment roles or its own). */
    idsInScope: (q: Queryable, tenantId: string, roleIds: string[]): Promise<string[]> =>
      store.idsInScope(q, tenantId, roleIds),
    /** The ids of the roles assignable in the account whose key is among `keys` (an identity provider's role names). */
    idsByKeys: (q: Queryable, tenantId: string, keys: string[]): Promise<string[]> =>
      store.idsByKeys(q, tenantId, keys),
    // assertGrantable / assertRevocable (grants.ts): the one rule for who may give or take away which roles.
    ...createGrants(rolesInReach),
    /** The id check alone (400 `UNKNOWN_IDS`: no role in the account's reach); grants use assertGrantable. */
    async assertAssignable(q: Queryable, tenantId: string, roleIds: string[]): Promise<void> {
      await rolesInReach(q, roleIds, 'roleIds', tenantId);
    },
    /** Roles with their permission ids, ordered by level then key; unknown ids are skipped. */
    async rolesByIds(q: Queryable, roleIds: string[]): Promise<RoleRecord[]> {
      return (await store.rolesByIds(q, roleIds)).map(record);
    },
    /** The permissions any of the roles holds, each once, in key order. */
    async permissionsOfRoles(q: Queryable, roleIds: string[]): Promise<PermissionRecord[]> {
      return (await store.permissionsOfRoles(q, roleIds)).map(toPermission);
    },
    /** The distinct permission keys the roles hold, sorted; one query. */
    permissionKeysOfRoles: (q: Queryable, roleIds: string[]): Promise<string[]> =>
      store.permissionKeysOfRoles(q, roleIds),
    /** Removes the roles of an account; run by the account-removal hook, inside its transaction. */
    removeAccountRoles: (q: Queryable, tenantId: string): Promise<number> => store.deleteAccountRoles(q, tenantId),

    // -- roles v1 --

    /** Environment roles, plus the account's own roles when `scope` names an account. */
    async list(scope: string | undefined): Promise<RoleRecord[]> {
      if (scope !== undefined) await requireAccount(db, scope);
      return (await store.rolesInScope(db, scope)).map(record);
    },

    /**
     * Creates environment roles (no scope) or roles of an account, all or none, each with the permission ids of its
     * `permissions`; answers them in body order. A user creates roles of its own account within account-writes.ts.
     */
    async create(scope: string | undefined, bodies: CreateRole[], actor: Actor = VENDOR): Promise<RoleRecord[]> {
      bodies.forEach((b, i) => checkRoleText(b, `body.${i}.`));
      const twice = repeated(bodies.map((b) => b.key));
      if (twice.length)
        throw new AppError('ROLE_KEY_EXISTS', `The body repeats role keys: ${twice.join(', ')}`, { keys: twice });
      return db.transaction(async (tx) => {
        if (scope !== undefined) await requireAccount(tx, scope);
        const granted: string[][] = [];
        for (const [i, b] of bodies.entries()) {
          await assertLevelWithin(tx, actor, b.level, `body.${i}.level`);
          const perms = await requirePermissions(tx, b.permissions ?? [], `body.${i}.permissions`);
          assertPermissionsGrantable(actor, perms, `body.${i}.permissions`);
          granted.push(perms.map((p) => p.id));
        }
        const rows: store.NewRole[] = bodies.map((b) => ({
          id: newId(),
          tenant_id: scope ?? null,
          key: b.key,
          name: b.name,
          description: b.description ?? '',
          is_default: b.isDefault ?? false,
          first_user_role: b.firstUserRole ?? false,
          level: b.level,
        }));
        const written = await store.insertRoles(tx, rows);
        if (written.size < rows.length) {
          const taken = rows.filter((r) => !written.has(r.id)).map((r) => r.key);
          throw new AppError(
            'ROLE_KEY_EXISTS',
            `Role keys already exist ${scope === undefined ? 'in the environment' : `in account ${scope}`}: ${taken.join(', ')}`,
            { keys: taken },
          );
        }
        for (const [i, r] of rows.entries()) await store.addRolePermissions(tx, [r.id], granted[i]);
        const byId = new Map(
          (
            await store.rolesByIds(
              tx,
              rows.map((r) => r.id),
            )
          ).map((r) => [r.id, r]),
        );
        return rows.map((r) => record(byId.get(r.id)!));
      });
    },

    async update(roleId: string, body: UpdateRole, scope?: string, actor: Actor = VENDOR): Promise<RoleRecord> {
      checkRoleText(body, 'body.');
      const values: Record<string, unknown> = {};
      for (const [field, column] of Object.entries(ROLE_COLUMNS)) {
        const v = (body as Record<string, unknown>)[field];
        if (v !== undefined) values[column] = v;
      }
      if (Object.keys(values).length === 0)
        throw new AppError('VALIDATION', `The body must set at least one of ${Object.keys(ROLE_COLUMNS).join(', ')}`);
      return db.transaction(async (tx) => {
        if (scope !== undefined) await requireAccount(tx, scope);
        const row = await requireRole(tx, roleId, scope, true);
        await assertRoleEditable(tx, actor, row);
        await assertLevelWithin(tx, actor, body.level, 'body.level');
        if (body.key !== undefined && (await store.takenRoleKeys(tx, row.tenant_id, [body.key], row.id)).length) {
          throw new AppError(
            'ROLE_KEY_EXISTS',
            `A role with key ${body.key} already exists ${row.tenant_id === null ? 'in the environment' : `in account ${row.tenant_id}`}`,
          );
        }
        await uniqueAs('ROLE_KEY_EXISTS', `A role with key ${body.key} already exists in its scope`, () =>
          store.updateRole(tx, row.id, values),
        );
        return reload(tx, row.id);
      });
    },

    async remove(roleId: string, scope?: string, actor: Actor = VENDOR): Promise<void> {
      await db.transaction(async (tx) => {
        if (scope !== undefined) await requireAccount(tx, scope);
        const row = await requireRole(tx, roleId, scope, true);
        await assertRoleEditable(tx, actor, row);
        await store.deleteRole(tx, row.id);
      });
    },

    /** Replaces the role's permissions with exactly `permissionIds`. */
    async setPermissions(roleId: string, permissionIds: string[], scope?: string, actor = VENDOR): Promise<RoleRecord> {
      return db.transaction(async (tx) => {
        if (scope !== undefined) await requireAccount(tx, scope);
        const row = await requireRole(tx, roleId, scope, true);
        await assertRoleEditable(tx, actor, row);
        const held = new Set(row.permissions);
        const added = (await requirePermissions(tx, permissionIds, 'permissionIds')).filter((p) => !held.has(p.id));
        assertPermissionsGrantable(actor, added, 'permissionIds');
        await store.setRolePermissions(tx, row.id, normalizeIds(permissionIds));
        await store.touchRoles(tx, [row.id]);
        return reload(tx, row.id);
      });
    },

    /** Moves an environment role into an account (it is then offered to that account only). */
    async moveToAccount(roleId: string, tenantId: string): Promise<RoleRecord> {
      return db.transaction(async (tx) => {
        const row = await requireRole(tx, roleId, undefined, true);
        await requireAccount(tx, tenantId, 'tenantId');
        if (row.tenant_id !== null) {
          if (row.tenant_id === tenantId) return record(row);
          throw new AppError(
            'ROLE_NOT_MOVABLE',
            `Role ${row.id} already belongs to account ${row.tenant_id}; only an environment role can be moved into an account`,
          );
        }
        if ((await store.takenRoleKeys(tx, tenantId, [row.key])).length) {
          throw new AppError('ROLE_KEY_EXISTS', `Account ${tenantId} already has a role with key ${row.key}`);
        }
        await uniqueAs('ROLE_KEY_EXISTS', `Account ${tenantId} already has a role with key ${row.key}`, () =>
          store.updateRole(tx, row.id, { tenant_id: tenantId }),
        );
        return reload(tx, row.id);
      });
    },

    // -- account roles v2 --

    async page(scope: string | undefined, q: RoleListQuery) {
      if (scope !== undefined) await requireAccount(db, scope);
      const limit = q._limit ?? 50;
      const page = q._offset ?? 0;
      const { rows, total } = await store.listRoles(db, {
        tenantId: scope,
        limit,
        page,
        filter: q._filter?.trim() || undefined,
        sortBy: q._sortBy ?? 'level',
        order: q._order ?? 'ASC',
      });
      return { items: rows.map(record), total, limit, page };
    },

    /**
     * Creates a role of the account, with the permissions of `baseRoleId` (an environment role or one of the
     * account's) plus `permissionIds`. A user may only put in permissions they hold themselves and that are not
     * classified NEVER; a base role's permissions outside that are left out rather than refused.
     */
    async createAccountRole(tenantId: string, body: CreateAccountRole, actor: Actor): Promise<RoleRecord> {
      checkRoleText(body, 'body.');
      return db.transaction(async (tx) => {
        await requireAccount(tx, tenantId, actor.kind === 'user' ? 'tenantId' : 'gatehouse-tenant-id');
        const base =
          body.baseRoleId !== undefined
            ? (await rolesInReach(tx, [body.baseRoleId], 'baseRoleId', tenantId))[0]
            : undefined;
        const explicit = await requirePermissions(tx, body.permissionIds ?? [], 'permissionIds');
        let inherited = base ? await store.permissionsByIds(tx, base.permissions) : [];
        if (actor.kind === 'user') {
          assertPermissionsGrantable(actor, explicit, 'permissionIds');
          inherited = inherited.filter((p) => grantablePermission(actor, p));
        }
        // A new account role ranks with its base role, else below every role the account can see; a user's never
        // ranks above the user (grants.ts), as its permissions never exceed theirs.
        let level = base ? base.level : Math.max(0, ...(await store.distinctLevels(tx, tenantId)));
        if (actor.kind === 'user') level = Math.max(level, (await grantorLevel(tx, actor)) ?? level);
        const id = newId();
        const written = await store.insertRoles(tx, [
          {
            id,
            tenant_id: tenantId,
            key: body.key,
            name: body.name,
            description: body.description ?? '',
            is_default: body.isDefault ?? false,
            first_user_role: false,
            level,
          },
        ]);
        if (!written.has(id))
          throw new AppError('ROLE_KEY_EXISTS', `Account ${tenantId} already has a role with key ${body.key}`);
        await store.addRolePermissions(tx, [id], [...new Set([...inherited, ...explicit].map((p) => p.id))]);
        return reload(tx, id);
      });
    },

    async distinctLevels(scope: string | undefined): Promise<number[]> {
      if (scope !== undefined) await requireAccount(db, scope);
      return store.distinctLevels(db, scope);
    },

    distinctTenants: (): Promise<string[]> => store.distinctTenants(db),
  };
}
