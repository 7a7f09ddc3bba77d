import { AppError } from '../../http/errors.ts';
import { newId } from '../../lib/crypto.ts';
import { isUniqueViolation, isUuid } from '../../lib/pg-errors.ts';
import { iso } from '../../lib/time.ts';
import type { Db, Queryable } from '../../storage/db.ts';
import type { Grantor, RolesService } from '../roles/index.ts';
import { parseMetadata, type TenantsService } from '../tenants/index.ts';
import type { CreateGroup, Group, GroupsPageQuery, Relations, UpdateGroup, UserGroupSummary } from './schema.ts';
import * as store from './store.ts';
import { toSummary } from './summary.ts';
import { createUserGroupsLookup } from './user-groups.service.ts';

export interface GroupsDeps {
  db: Db;
  roles: RolesService;
  tenants: TenantsService;
  /** The environment: its id is the lookups' `vendorId`. */
  environment: { readonly id: string };
  /** What groups read of the users module (its index), given by the wiring: the users module imports this one. */
  users: {
    membersAmong: (q: Queryable, tenantId: string, userIds: string[]) => Promise<Set<string>>;
    tables: store.UserTablesSql;
  };
}

export type GroupsService = ReturnType<typeof createGroupsService>;

const CONTROL = /[\u0000-\u001f\u007f]/;

function checkName(name: string | undefined, field = 'name'): string | undefined {
  if (name === undefined) return undefined;
  const v = name.trim();
  if (!v) throw new AppError('VALIDATION', `${field} must not be empty or blank`);
  if (CONTROL.test(v)) throw new AppError('VALIDATION', `${field} must not contain control characters`);
  return v;
}

function checkText(value: string | undefined, field: string): string | undefined {
  if (value === undefined) return undefined;
  if (/[\u0000]/.test(value) || /[\ud800-\udfff]/.test(value.replace(/[\ud800-\udbff][\udc00-\udfff]/g, ''))) {
    throw new AppError('VALIDATION', `${field} must not contain NUL characters or unpaired surrogates`);
  }
  return value;
}

/** User groups of an account: members (users of that account) and roles that members receive in their tokens. */
export function createGroupsService(deps: GroupsDeps) {
  const { db, roles, users: usersModule } = deps;

  async function requireGroup(q: Queryable, tenantId: string, id: string, lock = false): Promise<store.GroupRow> {
    const row = isUuid(id) ? await store.findGroup(q, tenantId, id.toLowerCase(), lock) : undefined;
    if (!row) throw new AppError('GROUP_NOT_FOUND', `No group with id ${id.slice(0, 64)} in account ${tenantId}`);
    return row;
  }

  async function requireEnabled(q: Queryable, what: 'groups' | 'roles'): Promise<void> {
    const c = await store.readConfig(q);
    if (!c.enabled)
      throw new AppError(
        'GROUPS_DISABLED',
        'User groups are disabled in this environment (POST /identity/resources/groups/v1/config)',
      );
    if (what === 'roles' && !c.rolesEnabled)
      throw new AppError(
        'GROUPS_DISABLED',
        'Group roles are disabled in this environment (rolesEnabled of the groups configuration)',
      );
  }

  /** Group records with the relations asked for; two or three statements whatever the number of groups. */
  async function records(
    q: Queryable,
    tenantId: string,
    rows: store.GroupRow[],
    relations?: Relations,
  ): Promise<Group[]> {
    const ids = rows.map((r) => r.id);
    const wantRoles = relations === 'roles' || relations === 'rolesAndUsers';
    const wantUsers = relations === 'users' || relations === 'rolesAndUsers';
    const links = wantRoles && ids.length ? await store.roleIdsOfGroups(q, tenantId, ids) : [];
    const roleRecords = links.length ? await roles.rolesByIds(q, [...new Set(links.map((l) => l.role_id))]) : [];
    const users = wantUsers && ids.length ? await store.usersOfGroups(q, usersModule.tables, tenantId, ids) : [];
    const roleById = new Map(roleRecords.map((r) => [r.id, r]));
    return rows.map((r) => {
      const mine = new Set(links.filter((l) => l.group_id === r.id).map((l) => l.role_id));
      return {
        ...toSummary(r),
        roles: roleRecords.filter((x) => mine.has(x.id) && roleById.has(x.id)),
        users: users
          .filter((u) => u.group_id === r.id)
          .map((u) => ({
            id: u.id,
            email: u.email ?? '',
            name: u.name,
            profilePictureUrl: u.profile_picture_url ?? '',
            createdAt: iso(u.created_at)!,
            lastLogin: iso(u.last_login),
            joinedAt: iso(u.joined_at)!,
          })),
      };
    });
  }

  type Way = 'join' | 'leave';
  /** Joining or leaving a group gives or takes its roles: the caller must be able to grant them all. */
  async function assertGroupRolesWithin(q: Queryable, tenantId: string, groupId: string, by: Grantor, verb: Way) {
    if (by.kind === 'vendor') return;
    const ids = (await store.roleIdsOfGroups(q, tenantId, [groupId])).map((l) => l.role_id);
    const field = `the roles of group ${groupId}`;
    if (verb === 'join') await roles.assertGrantableExisting(q, tenantId, by, ids, field);
    else await roles.assertRevocable(q, tenantId, by, ids, field);
  }

  const one = async (q: Queryable, tenantId: string, id: string, relations: Relations = 'rolesAndUsers') =>
    (await records(q, tenantId, [await requireGroup(q, tenantId, id)], relations))[0];

  function nameTaken(err: unknown, name: string): never {
    if (isUniqueViolation(err))
      throw new AppError(
        'GROUP_NAME_EXISTS',
        `A group named "${name}" already exists in this account (names are compared case-insensitively)`,
      );
    throw err;
  }

  return {
    ...createUserGroupsLookup({
      db,
      tenants: deps.tenants,
      vendorId: () => deps.environment.id,
      userTables: usersModule.tables,
    }),

    async list(tenantId: string, relations?: Relations): Promise<{ groups: Group[] }> {
      await deps.tenants.requireLive(db, tenantId, 'gatehouse-tenant-id');
      const { rows } = await store.listGroups(db, tenantId);
      return { groups: await records(db, tenantId, rows, relations) };
    },

    async page(tenantId: string, qs: GroupsPageQuery) {
      await deps.tenants.requireLive(db, tenantId, 'gatehouse-tenant-id');
      const limit = qs._limit ?? 50;
      const page = qs._offset ?? 0;
      const { rows, total } = await store.listGroups(db, tenantId, {
        limit,
        page,
        sortBy: qs._sortBy,
        order: qs._order,
        filter: qs._filter?.trim() || undefined,
      });
      return { items: await records(db, tenantId, rows, qs._groupsRelations), total, limit, page };
    },

    async bulkGet(tenantId: string, ids: string[], relations?: Relations): Promise<{ groups: Group[] }> {
      await deps.tenants.requireLive(db, tenantId, 'gatehouse-tenant-id');
      const rows = await store.groupsByIds(db, tenantId, [...new Set(ids.filter(isUuid).map((s) => s.toLowerCase()))]);
      return { groups: await records(db, tenantId, rows, relations) };
    },

    get: (tenantId: string, id: string, relations?: Relations) => one(db, tenantId, id, relations),

    async create(tenantId: string, body: CreateGroup): Promise<Group> {
      const name = checkName(body.name)!;
      const metadata = body.metadata !== undefined ? parseMetadata(body.metadata, 'metadata') : {};
      try {
        return await db.transaction(async (tx) => {
          await requireEnabled(tx, 'groups');
          await deps.tenants.requireLive(tx, tenantId, 'gatehouse-tenant-id', 'FOR SHARE');
          const row = await store.insertGroup(tx, {
            tenant_id: tenantId,
            id: newId(),
            name,
            color: checkText(body.color, 'color') ?? '',
            description: checkText(body.description, 'description') ?? '',
            metadata,
          });
          return (await records(tx, tenantId, [row], 'rolesAndUsers'))[0];
        });
      } catch (err) {
        nameTaken(err, name);
      }
    },

    async update(tenantId: string, id: string, body: UpdateGroup): Promise<Group> {
      const values: Record<string, unknown> = {};
      const name = checkName(body.name);
      if (name !== undefined) values.name = name;
      if (body.color !== undefined) values.color = checkText(body.color, 'color');
      if (body.description !== undefined) values.description = checkText(body.description, 'description');
      if (body.metadata !== undefined) values.metadata = parseMetadata(body.metadata, 'metadata');
      if (Object.keys(values).length === 0)
        throw new AppError('EMPTY_UPDATE', 'Give at least one of name, color, description, metadata');
      try {
        return await db.transaction(async (tx) => {
          await requireEnabled(tx, 'groups');
          const row = await requireGroup(tx, tenantId, id, true);
          await store.updateGroup(tx, tenantId, row.id, values);
          return one(tx, tenantId, row.id);
        });
      } catch (err) {
        nameTaken(err, name ?? '');
      }
    },

    /** Deletes a group; its members lose its roles, so a user caller must be able to take them away. */
    async remove(tenantId: string, id: string, by: Grantor): Promise<void> {
      await db.transaction(async (tx) => {
        const row = await requireGroup(tx, tenantId, id, true);
        await assertGroupRolesWithin(tx, tenantId, row.id, by, 'leave');
        await store.deleteGroup(tx, tenantId, row.id);
      });
    },

    /** Adds members; every id must name a member of the group's account (400 naming the others, nothing added). */
    async addUsers(tenantId: string, groupId: string, userIds: string[], by: Grantor): Promise<Group> {
      return db.transaction(async (tx) => {
        await requireEnabled(tx, 'groups');
        const group = await requireGroup(tx, tenantId, groupId, true);
        await assertGroupRolesWithin(tx, tenantId, group.id, by, 'join');
        const ids = userIds.map((s) => s.toLowerCase());
        const members = await usersModule.membersAmong(tx, tenantId, ids.filter(isUuid));
        const outside = userIds.filter((u, i) => !members.has(ids[i]));
        if (outside.length) {
          throw new AppError(
            'GROUP_USER_NOT_MEMBER',
            `userIds ${outside.slice(0, 20).join(', ')} are not members of account ${tenantId}; only users of the group's account can join its groups (add them to the account first)`,
            { userIds: outside },
          );
        }
        if (await store.addUsers(tx, tenantId, group.id, ids)) await store.touchGroup(tx, tenantId, group.id);
        return one(tx, tenantId, group.id);
      });
    },

    /** Removes members; ids that are not members of the group are ignored. */
    async removeUsers(tenantId: string, groupId: string, userIds: string[], by: Grantor): Promise<Group> {
      return db.transaction(async (tx) => {
        const group = await requireGroup(tx, tenantId, groupId, true);
        await assertGroupRolesWithin(tx, tenantId, group.id, by, 'leave');
        const ids = userIds.filter(isUuid).map((s) => s.toLowerCase());
        if (ids.length && (await store.removeUsers(tx, tenantId, group.id, ids)))
          await store.touchGroup(tx, tenantId, group.id);
        return one(tx, tenantId, group.id);
      });
    },

    /** Gives the group roles: environment roles or the group's account's (400 naming others; 403 beyond `by`). */
    async addRoles(tenantId: string, groupId: string, roleIds: string[], by: Grantor): Promise<Group> {
      return db.transaction(async (tx) => {
        await requireEnabled(tx, 'roles');
        const group = await requireGroup(tx, tenantId, groupId, true);
        await roles.assertGrantable(tx, tenantId, by, roleIds);
        if (
          await store.addRoles(
            tx,
            tenantId,
            group.id,
            roleIds.map((s) => s.toLowerCase()),
          )
        )
          await store.touchGroup(tx, tenantId, group.id);
        return one(tx, tenantId, group.id);
      });
    },

    async removeRoles(tenantId: string, groupId: string, roleIds: string[], by: Grantor): Promise<Group> {
      return db.transaction(async (tx) => {
        const group = await requireGroup(tx, tenantId, groupId, true);
        await roles.assertRevocable(tx, tenantId, by, roleIds);
        const ids = roleIds.filter(isUuid).map((s) => s.toLowerCase());
        if (ids.length && (await store.removeRoles(tx, tenantId, group.id, ids)))
          await store.touchGroup(tx, tenantId, group.id);
        return one(tx, tenantId, group.id);
      });
    },

    config: () => store.readConfig(db),
    async setConfig(body: { enabled?: boolean; rolesEnabled?: boolean }) {
      return db.transaction(async (tx) => {
        const current = await store.readConfig(tx);
        const next = {
          enabled: body.enabled ?? current.enabled,
          rolesEnabled: body.rolesEnabled ?? current.rolesEnabled,
        };
        await store.writeConfig(tx, next);
        return next;
      });
    },

    /** For the token issuer (`roleSources` of `createAuth`): the roles a user receives through groups in an account. */
    roleSource: Object.assign(
      (q: Queryable, a: { userId: string; tenantId: string }) => store.groupRoleIdsOf(q, a.tenantId, a.userId),
      { sql: store.GROUP_ROLE_IDS_SQL },
    ),
    /** For the account-removal hook. */
    forgetAccount: (q: Queryable, tenantId: string) => store.deleteAccountGroups(q, tenantId),
  };
}

/**
 * The groups of several users, for the User record: one statement for any number of users (a list page reads them
 * all at once). Keyed by user id; each entry carries the account it belongs to.
 */
export async function groupsOfUsers(
  q: Queryable,
  userIds: string[],
): Promise<Map<string, (UserGroupSummary & { tenantId: string })[]>> {
  const out = new Map<string, (UserGroupSummary & { tenantId: string })[]>();
  const ids = [...new Set(userIds.filter(isUuid))];
  if (!ids.length) return out;
  for (const r of await store.groupsOfUsers(q, ids)) {
    const list = out.get(r.user_id) ?? [];
    list.push({ ...toSummary(r), tenantId: r.tenant_id });
    out.set(r.user_id, list);
  }
  return out;
}
