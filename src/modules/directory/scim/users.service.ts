import { isDeepStrictEqual } from 'node:util';
import { newId, safeEqual } from '../../../lib/crypto.ts';
import { isUniqueViolation, isUuid } from '../../../lib/pg-errors.ts';
import { iso } from '../../../lib/time.ts';
import { AppError } from '../../../http/errors.ts';
import type { Db, Queryable } from '../../../storage/db.ts';
import { getForWrite, type ConnectionRow } from '../connections.store.ts';
import { listResponse, planList, wants, type ListQuery } from './list.ts';
import { applyPatch, readPatchBody } from './patch.ts';
import { emailOf, etagOf, ifMatchHolds, normaliseUser, passwordOf, project } from './resource.ts';
import { URN } from './schemas.ts';
import * as store from './store.ts';
import type { Sync } from './sync.ts';

export interface ScimCall {
  /** The connection as authenticated (possibly from the short-lived auth cache: see the directory service). */
  connection: ConnectionRow;
  /** The service root of the connection: `<publicUrl>/directory/resources/scim/v2.0/<id>`. */
  base: string;
  /** SHA-256 of the bearer token the call presented: writes check it against the connection row again. */
  tokenHash: string;
}

/**
 * The connection as it is now, read in a write's transaction: writes act on current settings (sync, mapping) and
 * never run with a token that was rotated or a connection that was deleted, whatever the auth cache holds.
 */
export async function connectionNow(
  tx: Queryable,
  call: ScimCall,
  forget: (id: string) => void,
): Promise<ConnectionRow> {
  const c = await getForWrite(tx, call.connection.tenant_id, call.connection.id);
  if (!c || !safeEqual(c.token_hash, call.tokenHash)) {
    forget(call.connection.id);
    throw new AppError('SCIM_INVALID_TOKEN');
  }
  return c;
}

/** Thrown inside a create's transaction when the connection's settings changed since the call was authenticated. */
class StaleConnection extends Error {
  constructor(readonly connection: ConnectionRow) {
    super('SCIM connection settings changed');
  }
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
export function createScimUsers(deps: { db: Db; sync: Sync; maxResults: number; forget: (id: string) => void }) {
  const { db, sync } = deps;

  function toResource(
    call: ScimCall,
    row: store.ScimUserRow,
    groups?: { value: string; display: string }[],
  ): Record<string, unknown> {
    const { userName, externalId, ...rest } = row.data;
    return {
      schemas: row.data[URN.enterprise] ? [URN.user, URN.enterprise] : [URN.user],
      id: row.id,
      ...(externalId !== undefined ? { externalId } : {}),
      userName,
      ...rest,
      ...(groups && groups.length
        ? {
            groups: groups.map((g) => ({
              value: g.value,
              display: g.display,
              $ref: `${call.base}/Groups/${g.value}`,
              type: 'direct',
            })),
          }
        : {}),
      meta: {
        resourceType: 'User',
        created: iso(row.created_at),
        lastModified: iso(row.updated_at),
        location: `${call.base}/Users/${row.id}`,
        version: etagOf(row.version),
      },
    };
  }

  async function require(q: Queryable, call: ScimCall, id: string, lock = false): Promise<store.ScimUserRow> {
    const row = isUuid(id) ? await store.getUser(q, scopeOf(call.connection), id, lock) : undefined;
    if (!row) throw new AppError('SCIM_RESOURCE_NOT_FOUND', `No User ${id} in this SCIM connection`);
    return row;
  }

  async function full(
    q: Queryable,
    call: ScimCall,
    row: store.ScimUserRow,
  ): Promise<Versioned<Record<string, unknown>>> {
    const groups = (await store.groupsOf(q, scopeOf(call.connection), [row.id])).get(row.id);
    return { resource: toResource(call, row, groups), version: row.version };
  }

  function precondition(ifMatch: string | undefined, row: store.ScimUserRow): void {
    if (!ifMatchHolds(ifMatch, row.version))
      throw new AppError(
        'SCIM_PRECONDITION_FAILED',
        `If-Match does not match the User's version ${etagOf(row.version)}`,
      );
  }

  const uniqueness = (err: unknown, userName: unknown): never => {
    if (isUniqueViolation(err)) {
      // userName is unique per connection (the index decides: no look-up before the insert); anything else, e.g. a
      // concurrent create of the same email in user management, is a conflict too.
      const constraint = (err as { constraint?: string }).constraint;
      if (userName !== undefined && (constraint === undefined || constraint === 'scim_users_user_name'))
        throw new AppError('SCIM_UNIQUENESS', `userName ${String(userName)} is already taken in this SCIM connection`);
      throw new AppError('SCIM_UNIQUENESS', 'The request conflicts with an existing resource');
    }
    throw err;
  };

  /** Writes new attributes over a user (PUT and PATCH); no write, no version bump when nothing changed. */
  async function write(
    tx: Queryable,
    call: ScimCall,
    c: ConnectionRow,
    before: store.ScimUserRow,
    data: Record<string, unknown>,
    password: string | undefined,
  ): Promise<store.ScimUserRow> {
    if (isDeepStrictEqual(data, before.data)) {
      if (password !== undefined) await sync.passwordOnly(tx, c, before, password);
      return before;
    }
    const s = scopeOf(c);
    if (
      String(data.userName).toLowerCase() !== before.user_name.toLowerCase() &&
      (await store.userNameTaken(tx, s, data.userName as string, before.id))
    ) {
      throw new AppError(
        'SCIM_UNIQUENESS',
        `userName ${String(data.userName)} is already taken in this SCIM connection`,
      );
    }
    const after = await store.updateUser(tx, s, before.id, columnsOf(data));
    await sync.updated(tx, c, before, after, password);
    return after;
  }

  return {
    toResource,

    /**
     * One transaction: (sync on) the Gatehouse user and membership first, then one INSERT that stores the directory
     * user already linked and re-checks the connection row (token, settings) in the same statement, then the events.
     * userName uniqueness is the unique index's (409 on violation; nothing is looked up before). Settings changed
     * since authentication (another process, within the auth cache's lifetime): rolled back and done again once
     * with the current ones.
     */
    async create(call: ScimCall, body: unknown): Promise<Versioned<Record<string, unknown>>> {
      const password = passwordOf(body);
      const data = normaliseUser(body);
      const s = scopeOf(call.connection);
      const columns = columnsOf(data);
      let c = call.connection;
      for (let attempt = 0; ; attempt++) {
        try {
          return await db.transaction(async (tx) => {
            const link = await sync.beforeCreate(tx, c, data, columns, password).catch(async (err) => {
              // Refused for settings the call may hold from the auth cache (no email while sync is on): confirm them.
              if (err instanceof AppError && attempt === 0) {
                const now = await connectionNow(tx, call, deps.forget);
                if (!now.sync_to_user_management) throw new StaleConnection(now);
              }
              throw err;
            });
            const r = await store.insertUserChecked(tx, s, newId(), columns, link, {
              tokenHash: call.tokenHash,
              sync: c.sync_to_user_management,
              groupRoles: c.group_roles,
            });
            if (r.kind === 'revoked') {
              deps.forget(c.id);
              throw new AppError('SCIM_INVALID_TOKEN');
            }
            if (r.kind === 'stale')
              throw new StaleConnection({
                ...c,
                sync_to_user_management: r.sync,
                group_roles: r.groupRoles as ConnectionRow['group_roles'],
              });
            await sync.created(tx, c, r.row);
            return { resource: toResource(call, r.row), version: r.row.version };
          });
        } catch (err) {
          if (err instanceof StaleConnection && attempt === 0) {
            deps.forget(c.id);
            c = err.connection;
            continue;
          }
          if (err instanceof AppError) throw err;
          return uniqueness(err, data.userName);
        }
      }
    },

    async get(call: ScimCall, id: string): Promise<Versioned<Record<string, unknown>>> {
      return full(db, call, await require(db, call, id));
    },

    async replace(
      call: ScimCall,
      id: string,
      body: unknown,
      ifMatch?: string,
    ): Promise<Versioned<Record<string, unknown>>> {
      const password = passwordOf(body);
      const data = normaliseUser(body);
      try {
        return await db.transaction(async (tx) => {
          const c = await connectionNow(tx, call, deps.forget);
          const before = await require(tx, call, id, true);
          precondition(ifMatch, before);
          return full(tx, call, await write(tx, call, c, before, data, password));
        });
      } catch (err) {
        if (err instanceof AppError) throw err;
        return uniqueness(err, data.userName);
      }
    },

    async patch(
      call: ScimCall,
      id: string,
      body: unknown,
      ifMatch?: string,
    ): Promise<Versioned<Record<string, unknown>>> {
      const ops = readPatchBody('User', body);
      try {
        return await db.transaction(async (tx) => {
          const c = await connectionNow(tx, call, deps.forget);
          const before = await require(tx, call, id, true);
          precondition(ifMatch, before);
          const patched = applyPatch(structuredClone(before.data), ops);
          // The password a PATCH sets is read from the patched body before normalising drops it.
          return full(tx, call, await write(tx, call, c, before, normaliseUser(patched), passwordOf(patched)));
        });
      } catch (err) {
        if (err instanceof AppError) throw err;
        return uniqueness(err, undefined);
      }
    },

    async remove(call: ScimCall, id: string, ifMatch?: string): Promise<void> {
      await db.transaction(async (tx) => {
        const c = await connectionNow(tx, call, deps.forget);
        const row = await require(tx, call, id, true);
        precondition(ifMatch, row);
        await store.deleteUser(tx, scopeOf(c), row.id);
        await sync.deleted(tx, c, row);
      });
    },

    async list(call: ScimCall, q: ListQuery) {
      const s = scopeOf(call.connection);
      const plan = planList('User', q, s, deps.maxResults);
      // The users' groups come with the page (one statement), when the answer includes them.
      const withGroups = wants('groups', q);
      const { rows, total } = await store.page<store.ScimUserRow & { groups__?: { value: string; display: string }[] }>(
        db,
        'scim_users',
        s,
        plan.where,
        plan.order,
        plan.params,
        plan.startIndex - 1,
        plan.count,
        withGroups ? store.GROUPS_OF_R : '',
      );
      const resources = rows.map(({ groups__, ...r }) =>
        project('User', toResource(call, r, groups__), q.attributes, q.excludedAttributes),
      );
      return listResponse(resources, total, plan.startIndex);
    },
  };
}

export type ScimUsers = ReturnType<typeof createScimUsers>;
