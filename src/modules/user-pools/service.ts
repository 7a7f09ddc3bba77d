import { AppError } from '../../http/errors.ts';
import { decrypt, encrypt, newId } from '../../lib/crypto.ts';
import { isUuid } from '../../lib/pg-errors.ts';
import { iso } from '../../lib/time.ts';
import type { Db, Queryable } from '../../storage/db.ts';
import { BUILT_IN_ID, MASK, TYPES, type SourceBody, type UserSource } from './schema.ts';
import * as store from './store.ts';

export type UserPoolsService = ReturnType<typeof createUserPoolsService>;

/**
 * User pools (user sources) of the environment: the built-in pool (Gatehouse's own user store, always present) and
 * records of external identity sources (Auth0, Cognito, Firebase, custom code, OIDC federation) with their connection
 * settings, secrets sealed with the key-encryption key. Each application takes its users from exactly one source: the
 * built-in pool unless assigned to an external one.
 */
export function createUserPoolsService(deps: { db: Db; kek: Buffer }) {
  const { db, kek } = deps;

  /** Splits a configuration into what is stored in clear and the sealed secrets; MASK keeps a stored secret. */
  function seal(type: string, configuration: Record<string, unknown>, previous: Record<string, unknown> = {}) {
    const clear: Record<string, unknown> = {};
    const secrets: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(configuration)) {
      if (!TYPES[type].secrets.includes(k)) clear[k] = v;
      else if (v === MASK) {
        if (previous[k] === undefined)
          throw new AppError(
            'VALIDATION',
            `configuration.${k} is the placeholder ${MASK} but no ${k} is stored; send the secret itself`,
          );
        secrets[k] = previous[k];
      } else secrets[k] = v;
    }
    return {
      configuration: clear,
      secrets_enc: Object.keys(secrets).length ? encrypt(kek, JSON.stringify(secrets)) : null,
    };
  }
  const unseal = (row: store.SourceRow): Record<string, unknown> =>
    row.secrets_enc ? JSON.parse(decrypt(kek, row.secrets_enc)) : {};

  function toSource(r: store.SourceRow & { app_ids: string[]; users_count: number }, withCount = true): UserSource {
    const masked = Object.fromEntries(
      (TYPES[r.type]?.secrets ?? []).filter((k) => r.secrets_enc && k in unseal(r)).map((k) => [k, MASK]),
    );
    return {
      id: r.id,
      name: r.name,
      type: r.type,
      description: r.description,
      appIds: r.app_ids,
      index: r.idx,
      configuration: { ...r.configuration, ...masked },
      ...(withCount ? { usersCount: r.users_count } : {}),
    };
  }

  async function requireSource(q: Queryable, id: string, lock = false): Promise<store.SourceRow> {
    const row = isUuid(id) ? await store.findSource(q, id.toLowerCase(), lock) : undefined;
    if (!row) throw new AppError('USER_SOURCE_NOT_FOUND', `No user source with id ${id.slice(0, 64)}`);
    return row;
  }

  async function requireApps(q: Queryable, appIds: string[], field = 'appIds'): Promise<string[]> {
    const ids = appIds.map((s) => s.toLowerCase());
    const known = await store.existingApps(q, ids.filter(isUuid));
    const unknown = appIds.filter((_, i) => !known.has(ids[i]));
    if (unknown.length)
      throw new AppError(
        'UNKNOWN_IDS',
        `${field} names applications that do not exist: ${unknown.slice(0, 20).join(', ')}`,
        { [field]: unknown },
      );
    return ids;
  }

  const checkName = (name: string | undefined) => {
    if (name !== undefined && !name.trim()) throw new AppError('VALIDATION', 'name must not be blank');
    return name?.trim();
  };

  return {
    async list(): Promise<UserSource[]> {
      return (await store.listSources(db)).map((r) => toSource(r));
    },

    async get(id: string): Promise<UserSource> {
      const row = await requireSource(db, id);
      return toSource((await store.listSources(db, row.id))[0], false);
    },

    async create(type: string, body: SourceBody) {
      const name = checkName(body.name)!;
      return db.transaction(async (tx) => {
        const appIds = body.appIds?.length ? await requireApps(tx, body.appIds) : [];
        const id = newId();
        const sealed = seal(type, body.configuration ?? {});
        await store.insertSource(tx, {
          id,
          name,
          type,
          description: body.description ?? '',
          idx: body.index ?? 0,
          ...sealed,
        });
        if (appIds.length) await store.assignApps(tx, id, appIds);
        return { id, name, type, appIds, description: body.description ?? '', index: body.index ?? 0 };
      });
    },

    /** Replaces the fields given; a configuration is replaced whole (secrets sent as the placeholder are kept). */
    async update(type: string, id: string, body: SourceBody): Promise<UserSource> {
      return db.transaction(async (tx) => {
        const row = await requireSource(tx, id, true);
        if (row.id === BUILT_IN_ID)
          throw new AppError('BUILT_IN_SOURCE', 'The built-in user pool has no external configuration to change');
        if (row.type !== type)
          throw new AppError(
            'VALIDATION',
            `User source ${row.id} is of type ${row.type}; update it through the ${row.type} route`,
          );
        const values: Parameters<typeof store.updateSource>[2] = {};
        const name = checkName(body.name);
        if (name !== undefined) values.name = name;
        if (body.description !== undefined) values.description = body.description;
        if (body.index !== undefined) values.idx = body.index;
        if (body.configuration !== undefined) Object.assign(values, seal(type, body.configuration, unseal(row)));
        await store.updateSource(tx, row.id, values);
        return toSource((await store.listSources(tx, row.id))[0], false);
      });
    },

    async remove(id: string): Promise<void> {
      await db.transaction(async (tx) => {
        const row = await requireSource(tx, id, true);
        if (row.id === BUILT_IN_ID) throw new AppError('BUILT_IN_SOURCE', 'The built-in user pool cannot be removed');
        await store.deleteSource(tx, row.id);
      });
    },

    /** Applications take their users from this source from now on (moved from whichever source had them). */
    async assign(sourceId: string, appIds: string[]): Promise<UserSource> {
      return db.transaction(async (tx) => {
        const row = await requireSource(tx, sourceId, true);
        await store.assignApps(tx, row.id, await requireApps(tx, appIds));
        return toSource((await store.listSources(tx, row.id))[0], false);
      });
    },

    /** Applications leave this source and return to the built-in pool; applications it does not hold are ignored. */
    async unassign(sourceId: string, appIds: string[]): Promise<UserSource> {
      return db.transaction(async (tx) => {
        const row = await requireSource(tx, sourceId, true);
        if (row.id === BUILT_IN_ID)
          throw new AppError(
            'BUILT_IN_SOURCE',
            'Applications leave the built-in pool by being assigned to another source',
          );
        await store.unassignApps(tx, row.id, await requireApps(tx, appIds));
        return toSource((await store.listSources(tx, row.id))[0], false);
      });
    },

    async users(id: string, limit: number, page: number) {
      const row = await requireSource(db, id);
      const { rows, total } = await store.usersOf(db, row.id, limit, page);
      return { items: rows.map((r) => ({ email: r.email, lastLogin: iso(r.last_login) })), total, limit, page };
    },

    /** The source an application takes its users from (the built-in pool unless assigned elsewhere). */
    async sourceOfApp(q: Queryable, appId: string): Promise<{ id: string; type: string }> {
      return (await store.sourceOfApp(q, appId)) ?? { id: BUILT_IN_ID, type: 'gatehouse' };
    },
  };
}
