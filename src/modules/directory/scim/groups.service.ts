import { filter as memoryFilter } from 'scim2-parse-filter';
import { newId } from '../../../lib/crypto.ts';
import { isUniqueViolation, isUuid } from '../../../lib/pg-errors.ts';
import { iso } from '../../../lib/time.ts';
import { AppError } from '../../../http/errors.ts';
import type { Db, Queryable } from '../../../storage/db.ts';
import type { EventsService } from '../../events/index.ts';
import type { ConnectionRow } from '../connections.store.ts';
import { parseFilter } from './filter.ts';
import { listResponse, planList, wants, type ListQuery } from './list.ts';
import { applyPatch, readPatchBody, type PatchOp } from './patch.ts';
import { etagOf, ifMatchHolds, memberIds, normaliseGroup, project } from './resource.ts';
import { URN } from './schemas.ts';
import * as store from './store.ts';
import type { Sync } from './sync.ts';
import { connectionNow, type ScimCall, type Versioned } from './users.service.ts';

const scopeOf = (c: ConnectionRow): store.Scope => ({ tenantId: c.tenant_id, connectionId: c.id });
type Member = { value: string; display: string | null };

/**
 * SCIM Groups of one connection. Members live in their own table, so member operations of PATCH are applied here
 * (add, remove by value list as Entra ID sends it, remove by value filter, replace) and only the other attributes go
 * through the PATCH library. Members must be Users of the same connection (400 `invalidValue` otherwise).
 */
export function createScimGroups(deps: {
  db: Db;
  sync: Sync;
  events: EventsService;
  maxResults: number;
  forget: (id: string) => void;
}) {
  const { db, sync } = deps;

  function toResource(call: ScimCall, row: store.ScimGroupRow, members?: Member[]): Record<string, unknown> {
    const { displayName, externalId, ...rest } = row.data;
    return {
      schemas: [URN.group],
      id: row.id,
      ...(externalId !== undefined ? { externalId } : {}),
      displayName,
      ...rest,
      ...(members
        ? {
            members: members.map((m) => ({
              value: m.value,
              display: m.display ?? undefined,
              $ref: `${call.base}/Users/${m.value}`,
              type: 'User',
            })),
          }
        : {}),
      meta: {
        resourceType: 'Group',
        created: iso(row.created_at),
        lastModified: iso(row.updated_at),
        location: `${call.base}/Groups/${row.id}`,
        version: etagOf(row.version),
      },
    };
  }

  async function require(q: Queryable, call: ScimCall, id: string, lock = false): Promise<store.ScimGroupRow> {
    const row = isUuid(id) ? await store.getGroup(q, scopeOf(call.connection), id, lock) : undefined;
    if (!row) throw new AppError('SCIM_RESOURCE_NOT_FOUND', `No Group ${id} in this SCIM connection`);
    return row;
  }

  async function full(
    q: Queryable,
    call: ScimCall,
    row: store.ScimGroupRow,
    withMembers = true,
  ): Promise<Versioned<Record<string, unknown>>> {
    const members = withMembers
      ? ((await store.membersOf(q, scopeOf(call.connection), [row.id])).get(row.id) ?? [])
      : undefined;
    return { resource: toResource(call, row, members), version: row.version };
  }

  async function requireUsers(q: Queryable, s: store.Scope, ids: string[]): Promise<void> {
    const found = new Set(await store.existingUserIds(q, s, ids.filter(isUuid)));
    const missing = ids.filter((x) => !found.has(x));
    if (missing.length)
      throw new AppError(
        'SCIM_INVALID_VALUE',
        `members name no User of this SCIM connection: ${missing.slice(0, 10).join(', ')}`,
      );
  }

  /** Role mapping follows membership and group names: recomputed for the users whose groups changed. */
  async function rolesFor(tx: Queryable, c: ConnectionRow, userIds: string[]): Promise<void> {
    if (!c.sync_to_user_management || c.group_roles.length === 0 || userIds.length === 0) return;
    const rows = (await Promise.all([...new Set(userIds)].map((id) => store.getUser(tx, scopeOf(c), id)))).filter(
      (r) => r !== undefined,
    );
    await sync.recomputeRoles(tx, c, rows);
  }

  async function setMembers(tx: Queryable, call: ScimCall, groupId: string, ids: string[]): Promise<string[]> {
    const s = scopeOf(call.connection);
    await requireUsers(tx, s, ids);
    const current = await store.memberIdsOf(tx, s, groupId);
    const removed = await store.removeMembers(
      tx,
      s,
      groupId,
      current.filter((x) => !ids.includes(x)),
    );
    const added = await store.addMembers(
      tx,
      s,
      groupId,
      ids.filter((x) => !current.includes(x)),
    );
    return [...removed, ...added];
  }

  function precondition(ifMatch: string | undefined, row: store.ScimGroupRow): void {
    if (!ifMatchHolds(ifMatch, row.version))
      throw new AppError(
        'SCIM_PRECONDITION_FAILED',
        `If-Match does not match the Group's version ${etagOf(row.version)}`,
      );
  }

  async function nameFree(tx: Queryable, s: store.Scope, name: string, exceptId?: string): Promise<void> {
    if (await store.groupNameTaken(tx, s, name, exceptId))
      throw new AppError('SCIM_UNIQUENESS', `A Group named ${name} already exists in this SCIM connection`);
  }

  const conflict = (err: unknown): never => {
    if (isUniqueViolation(err))
      throw new AppError('SCIM_UNIQUENESS', 'A Group with this displayName already exists in this SCIM connection');
    throw err;
  };

  /** Applies the member operations of a PATCH; returns the user ids whose membership changed. */
  async function memberOps(tx: Queryable, call: ScimCall, groupId: string, ops: PatchOp[]): Promise<string[]> {
    const s = scopeOf(call.connection);
    const changed: string[] = [];
    for (const op of ops) {
      const path = op.path ?? 'members';
      const bracket = /^members\[(.+)\]$/s.exec(path);
      if (bracket) {
        if (op.op !== 'remove')
          throw new AppError(
            'SCIM_INVALID_PATH',
            `${op.op} of ${path}: select members to change with remove, then add`,
          );
        const current = (await store.membersOf(tx, s, [groupId])).get(groupId) ?? [];
        const test = memoryFilter(parseFilter(bracket[1]));
        const hit = current
          .filter((m) => test({ value: m.value, display: m.display, type: 'User' }))
          .map((m) => m.value);
        changed.push(...(await store.removeMembers(tx, s, groupId, hit)));
        continue;
      }
      if (path !== 'members')
        throw new AppError('SCIM_INVALID_PATH', `${path} cannot be changed (members only take whole values)`);
      if (op.op === 'remove') {
        changed.push(
          ...(await store.removeMembers(
            tx,
            s,
            groupId,
            op.value === undefined || op.value === null ? undefined : memberIds(op.value),
          )),
        );
      } else if (op.op === 'add') {
        const ids = memberIds(op.value ?? []);
        await requireUsers(tx, s, ids);
        changed.push(...(await store.addMembers(tx, s, groupId, ids)));
      } else changed.push(...(await setMembers(tx, call, groupId, memberIds(op.value ?? []))));
    }
    return changed;
  }

  return {
    async create(call: ScimCall, body: unknown): Promise<Versioned<Record<string, unknown>>> {
      const g = normaliseGroup(body);
      const s = scopeOf(call.connection);
      try {
        return await db.transaction(async (tx) => {
          // displayName uniqueness is the unique index's (409 on violation, see conflict()).
          const c = await connectionNow(tx, call, deps.forget);
          const row = await store.insertGroup(
            tx,
            s,
            newId(),
            g.data.displayName as string,
            (g.data.externalId as string | undefined) ?? null,
            g.data,
          );
          const ids = g.members ?? [];
          await requireUsers(tx, s, ids);
          await store.addMembers(tx, s, row.id, ids);
          await rolesFor(tx, c, ids);
          await deps.events.emit(tx, {
            eventKey: 'scim.group_provisioned',
            tenantId: c.tenant_id,
            entity: { type: 'scimGroup', id: row.id },
            data: { connectionId: c.id, groupId: row.id, displayName: row.display_name, memberCount: ids.length },
          });
          return full(tx, call, row);
        });
      } catch (err) {
        if (err instanceof AppError) throw err;
        return conflict(err);
      }
    },

    async get(call: ScimCall, id: string, q: ListQuery = {}): Promise<Versioned<Record<string, unknown>>> {
      return full(db, call, await require(db, call, id), wants('members', q));
    },

    async replace(
      call: ScimCall,
      id: string,
      body: unknown,
      ifMatch?: string,
    ): Promise<Versioned<Record<string, unknown>>> {
      const g = normaliseGroup(body);
      const s = scopeOf(call.connection);
      try {
        return await db.transaction(async (tx) => {
          const c = await connectionNow(tx, call, deps.forget);
          const before = await require(tx, call, id, true);
          precondition(ifMatch, before);
          await nameFree(tx, s, g.data.displayName as string, id);
          const row = await store.updateGroup(
            tx,
            s,
            id,
            g.data.displayName as string,
            (g.data.externalId as string | undefined) ?? null,
            g.data,
          );
          const changed = await setMembers(tx, call, id, g.members ?? []);
          const renamed = before.display_name.toLowerCase() !== row.display_name.toLowerCase();
          await rolesFor(tx, c, renamed ? [...changed, ...(await store.memberIdsOf(tx, s, id))] : changed);
          return full(tx, call, row);
        });
      } catch (err) {
        if (err instanceof AppError) throw err;
        return conflict(err);
      }
    },

    async patch(
      call: ScimCall,
      id: string,
      body: unknown,
      ifMatch?: string,
      q: ListQuery = {},
    ): Promise<Versioned<Record<string, unknown>>> {
      const ops = readPatchBody('Group', body);
      const s = scopeOf(call.connection);
      const isMembers = (p?: string) => !!p && /^members(\[|$|\.)/i.test(p);
      const member: PatchOp[] = [];
      const other: PatchOp[] = [];
      for (const op of ops) {
        if (isMembers(op.path)) member.push(op);
        else if (!op.path && op.value && typeof op.value === 'object' && 'members' in (op.value as object)) {
          const { members, ...rest } = op.value as Record<string, unknown>;
          member.push({ op: op.op, path: 'members', value: members });
          if (Object.keys(rest).length) other.push({ ...op, value: rest });
        } else other.push(op);
      }
      try {
        return await db.transaction(async (tx) => {
          const c = await connectionNow(tx, call, deps.forget);
          const before = await require(tx, call, id, true);
          precondition(ifMatch, before);
          let row = before;
          if (other.length) {
            const g = normaliseGroup(applyPatch(structuredClone(before.data), other));
            if (g.data.displayName !== before.display_name) await nameFree(tx, s, g.data.displayName as string, id);
            row = await store.updateGroup(
              tx,
              s,
              id,
              g.data.displayName as string,
              (g.data.externalId as string | undefined) ?? null,
              g.data,
            );
          }
          const changed = await memberOps(tx, call, id, member);
          if (changed.length && row === before) row = await store.bumpGroup(tx, s, id);
          const renamed = before.display_name.toLowerCase() !== row.display_name.toLowerCase();
          await rolesFor(tx, c, renamed ? [...changed, ...(await store.memberIdsOf(tx, s, id))] : changed);
          return full(tx, call, row, wants('members', q));
        });
      } catch (err) {
        if (err instanceof AppError) throw err;
        return conflict(err);
      }
    },

    async remove(call: ScimCall, id: string, ifMatch?: string): Promise<void> {
      await db.transaction(async (tx) => {
        const c = await connectionNow(tx, call, deps.forget);
        const row = await require(tx, call, id, true);
        precondition(ifMatch, row);
        const members = await store.memberIdsOf(tx, scopeOf(c), id);
        await store.deleteGroup(tx, scopeOf(c), row.id);
        await rolesFor(tx, c, members);
      });
    },

    async list(call: ScimCall, q: ListQuery) {
      const s = scopeOf(call.connection);
      const plan = planList('Group', q, s, deps.maxResults);
      const { rows, total } = await store.page<store.ScimGroupRow>(
        db,
        'scim_groups',
        s,
        plan.where,
        plan.order,
        plan.params,
        plan.startIndex - 1,
        plan.count,
      );
      const members = wants('members', q)
        ? await store.membersOf(
            db,
            s,
            rows.map((r) => r.id),
          )
        : undefined;
      const resources = rows.map((r) =>
        project(
          'Group',
          toResource(call, r, members ? (members.get(r.id) ?? []) : undefined),
          q.attributes,
          q.excludedAttributes,
        ),
      );
      return listResponse(resources, total, plan.startIndex);
    },
  };
}

export type ScimGroups = ReturnType<typeof createScimGroups>;
