import { isDeepStrictEqual } from 'node:util';
import { newId } from '../../../lib/crypto.ts';
import { isUniqueViolation, isUuid } from '../../../lib/pg-errors.ts';
import { iso } from '../../../lib/time.ts';
import { AppError } from '../../../http/errors.ts';
import type { Db, Queryable } from '../../../storage/db.ts';
import type { ConnectionRow } from '../connections.store.ts';
import { listResponse, planList, wants, type ListQuery } from './list.ts';
import { applyPatch, readPatchBody } from './patch.ts';
import { emailOf, etagOf, ifMatchHolds, normaliseUser, project } from './resource.ts';
import { URN } from './schemas.ts';
import * as store from './store.ts';
import type { Sync } from './sync.ts';

export interface ScimCall {
  connection: ConnectionRow;
  /** The service root of the connection: `<publicUrl>/directory/resources/scim/v2.0/<id>`. */
  base: string;
}

export interface Versioned<T> {
  resource: T;
  version: number;
}

const scopeOf = (c: ConnectionRow): store.Scope => ({ tenantId: c.tenant_id, connectionId: c.id });

export function columnsOf(data: Record<string, unknown>): store.UserColumns {
  return {
    user_name: data.userName as string,
    external_id: (data.externalId as string | undefined) ?? null,
    display_name: (data.displayName as string | undefined) ?? null,
    email: emailOf(data) ?? null,
    active: data.active !== false,
    data,
  };
}

/** SCIM Users of one connection (RFC 7644 3.3 – 3.6). */
export function createScimUsers(deps: { db: Db; sync: Sync; maxResults: number }) {
  const { db, sync } = deps;

  function toResource(call: ScimCall, row: store.ScimUserRow, groups?: { value: string; display: string }[]): Record<string, unknown> {
    const { userName, externalId, ...rest } = row.data;
    return {
      schemas: row.data[URN.enterprise] ? [URN.user, URN.enterprise] : [URN.user],
      id: row.id,
      ...(externalId !== undefined ? { externalId } : {}),
      userName,
      ...rest,
      ...(groups && groups.length ? { groups: groups.map((g) => ({ value: g.value, display: g.display, $ref: `${call.base}/Groups/${g.value}`, type: 'direct' })) } : {}),
      meta: { resourceType: 'User', created: iso(row.created_at), lastModified: iso(row.updated_at), location: `${call.base}/Users/${row.id}`, version: etagOf(row.version) },
    };
  }

  async function require(q: Queryable, call: ScimCall, id: string, lock = false): Promise<store.ScimUserRow> {
    const row = isUuid(id) ? await store.getUser(q, scopeOf(call.connection), id, lock) : undefined;
    if (!row) throw new AppError('SCIM_RESOURCE_NOT_FOUND', `No User ${id} in this SCIM connection`);
    return row;
  }

  async function full(q: Queryable, call: ScimCall, row: store.ScimUserRow): Promise<Versioned<Record<string, unknown>>> {
    const groups = (await store.groupsOf(q, scopeOf(call.connection), [row.id])).get(row.id);
    return { resource: toResource(call, row, groups), version: row.version };
  }

  function precondition(ifMatch: string | undefined, row: store.ScimUserRow): void {
    if (!ifMatchHolds(ifMatch, row.version)) throw new AppError('SCIM_PRECONDITION_FAILED', `If-Match does not match the User's version ${etagOf(row.version)}`);
  }

  const uniqueness = (err: unknown, userName: unknown): never => {
    if (isUniqueViolation(err)) throw new AppError('SCIM_UNIQUENESS', `userName ${String(userName)} is already taken in this SCIM connection`);
    throw err;
  };

  /** Writes new attributes over a user (PUT and PATCH); no write, no version bump when nothing changed. */
  async function write(tx: Queryable, call: ScimCall, before: store.ScimUserRow, data: Record<string, unknown>): Promise<store.ScimUserRow> {
    if (isDeepStrictEqual(data, before.data)) return before;
    const s = scopeOf(call.connection);
    if (String(data.userName).toLowerCase() !== before.user_name.toLowerCase() && (await store.userNameTaken(tx, s, data.userName as string, before.id))) {
      throw new AppError('SCIM_UNIQUENESS', `userName ${String(data.userName)} is already taken in this SCIM connection`);
    }
    const after = await store.updateUser(tx, s, before.id, columnsOf(data));
    await sync.updated(tx, call.connection, before, after);
    return after;
  }

  return {
    toResource,

    async create(call: ScimCall, body: unknown): Promise<Versioned<Record<string, unknown>>> {
      const data = normaliseUser(body);
      const s = scopeOf(call.connection);
      try {
        return await db.transaction(async (tx) => {
          if (await store.userNameTaken(tx, s, data.userName as string)) throw new AppError('SCIM_UNIQUENESS', `userName ${String(data.userName)} is already taken in this SCIM connection`);
          const row = await store.insertUser(tx, s, newId(), columnsOf(data));
          await sync.created(tx, call.connection, row);
          return { resource: toResource(call, row), version: row.version };
        });
      } catch (err) {
        if (err instanceof AppError) throw err;
        return uniqueness(err, data.userName);
      }
    },

    async get(call: ScimCall, id: string): Promise<Versioned<Record<string, unknown>>> {
      return full(db, call, await require(db, call, id));
    },

    async replace(call: ScimCall, id: string, body: unknown, ifMatch?: string): Promise<Versioned<Record<string, unknown>>> {
      const data = normaliseUser(body);
      try {
        return await db.transaction(async (tx) => {
          const before = await require(tx, call, id, true);
          precondition(ifMatch, before);
          return full(tx, call, await write(tx, call, before, data));
        });
      } catch (err) {
        if (err instanceof AppError) throw err;
        return uniqueness(err, data.userName);
      }
    },

    async patch(call: ScimCall, id: string, body: unknown, ifMatch?: string): Promise<Versioned<Record<string, unknown>>> {
      const ops = readPatchBody('User', body);
      try {
        return await db.transaction(async (tx) => {
          const before = await require(tx, call, id, true);
          precondition(ifMatch, before);
          const patched = applyPatch(structuredClone(before.data), ops);
          return full(tx, call, await write(tx, call, before, normaliseUser(patched)));
        });
      } catch (err) {
        if (err instanceof AppError) throw err;
        return uniqueness(err, undefined);
      }
    },

    async remove(call: ScimCall, id: string, ifMatch?: string): Promise<void> {
      await db.transaction(async (tx) => {
        const row = await require(tx, call, id, true);
        precondition(ifMatch, row);
        await store.deleteUser(tx, scopeOf(call.connection), row.id);
        await sync.deleted(tx, call.connection, row);
      });
    },

    async list(call: ScimCall, q: ListQuery) {
      const s = scopeOf(call.connection);
      const plan = planList('User', q, s, deps.maxResults);
      const { rows, total } = await store.page<store.ScimUserRow>(db, 'scim_users', s, plan.where, plan.order, plan.params, plan.startIndex - 1, plan.count);
      const groups = wants('groups', q) ? await store.groupsOf(db, s, rows.map((r) => r.id)) : new Map();
      const resources = rows.map((r) => project('User', toResource(call, r, groups.get(r.id)), q.attributes, q.excludedAttributes));
      return listResponse(resources, total, plan.startIndex);
    },
  };
}

export type ScimUsers = ReturnType<typeof createScimUsers>;
