import { newId } from '../../lib/crypto.ts';
import { iso } from '../../lib/time.ts';
import { AppError } from '../../http/errors.ts';
import { isUniqueViolation } from '../../lib/pg-errors.ts';
import type { Db, Queryable } from '../../storage/db.ts';
import { listAccounts } from './list.store.ts';
import { DEFAULT_LIST_CACHE, ListCache, type ListCacheLimits } from './list.cache.ts';
import type { Account, CreateAccount, ListQuery, UpdateAccount } from './schema.ts';
import * as store from './store.ts';
import type { EventsService } from '../events/index.ts';

export interface TenantsDeps {
  db: Db;
  /**
   * The outbox: account.created, account.updated, account.deleted; and the domain events of its bus (in the write's
   * transaction): accounts.created, account.removed (other modules drop what they keep of the account).
   */
  events?: EventsService;
  /** Bounds of the in-process cache of broad-filter lists (list.cache.ts); false turns it off. */
  listCache?: Partial<ListCacheLimits> | false;
}

export function toAccount(r: store.TenantRow): Account {
  return {
    id: r.id,
    tenantId: r.tenant_id,
    name: r.name,
    alias: r.alias,
    metadata: JSON.stringify(r.metadata ?? {}),
    isReseller: r.is_reseller,
    subAccountAccessType: r.sub_account_access_type,
    parentTenantId: r.parent_tenant_id,
    status: r.status,
    website: r.website,
    applicationUrl: r.application_url,
    loginUrl: r.login_url,
    logo: r.logo,
    logoUrl: r.logo_url,
    address: r.address,
    timezone: r.timezone,
    dateFormat: r.date_format,
    timeFormat: r.time_format,
    currency: r.currency,
    creatorName: r.creator_name,
    creatorEmail: r.creator_email,
    createdAt: iso(r.created_at)!,
    updatedAt: iso(r.updated_at)!,
    deletedAt: iso(r.deleted_at),
  };
}

/** Metadata arrives as an object or as a string holding one; anything else is a 400 naming the field. */
export function parseMetadata(value: unknown, field = 'metadata'): Record<string, unknown> {
  let v = value;
  if (typeof v === 'string') {
    try {
      v = JSON.parse(v);
    } catch {
      throw new AppError('VALIDATION', `${field} must be a JSON object or a string holding one; it is not valid JSON`);
    }
  }
  if (v === null || typeof v !== 'object' || Array.isArray(v))
    throw new AppError('VALIDATION', `${field} must be a JSON object`);
  return v as Record<string, unknown>;
}

/** API fields of a create or update body → columns. */
export function toColumns(body: Partial<CreateAccount>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [field, column] of Object.entries(store.COLUMNS)) {
    const v = (body as Record<string, unknown>)[field];
    if (v !== undefined) out[column] = v;
  }
  if (body.metadata !== undefined) out.metadata = parseMetadata(body.metadata);
  return out;
}

export type TenantsService = ReturnType<typeof createTenantsService>;

/** A write that set an alias another live account holds (the unique index on lower(alias)) is a 409 naming it. */
async function aliasWrite<T>(alias: string | null | undefined, write: () => Promise<T>): Promise<T> {
  try {
    return await write();
  } catch (err) {
    if (
      alias &&
      isUniqueViolation(err) &&
      String((err as { constraint?: unknown }).constraint ?? 'tenants_alias') === 'tenants_alias'
    ) {
      throw new AppError('ACCOUNT_ALIAS_TAKEN', `alias ${alias} is already the alias of another account`);
    }
    throw err;
  }
}

export function createTenantsService(deps: TenantsDeps) {
  const { db } = deps;
  const listCache = deps.listCache === false ? undefined : new ListCache({ ...DEFAULT_LIST_CACHE, ...deps.listCache });

  /** The one path that writes accounts (create, sub-accounts, migration): inserts, then publishes accounts.created. */
  async function insertAccounts(tx: Db, rows: store.NewTenant[]): Promise<Set<string>> {
    const written = await store.insertAccounts(tx, rows);
    await deps.events?.emitMany(
      tx,
      rows
        .filter((r) => written.has(r.tenant_id))
        .map((r) => ({
          eventKey: 'account.created' as const,
          tenantId: r.tenant_id,
          entity: { type: 'account', id: r.tenant_id },
          data: {
            tenantId: r.tenant_id,
            name: (r.name as string | undefined) ?? null,
            parentTenantId: r.parent_tenant_id ?? null,
          },
        })),
    );
    if (written.size > 0) await deps.events?.bus.publish(tx, 'accounts.created', { tenantIds: [...written] });
    return written;
  }

  /** account.updated with the API names of the fields the change set. */
  async function emitUpdated(tx: Queryable, row: store.TenantRow, changed: string[]): Promise<void> {
    await deps.events?.emit(tx, {
      eventKey: 'account.updated',
      tenantId: row.tenant_id,
      entity: { type: 'account', id: row.tenant_id },
      data: { tenantId: row.tenant_id, name: row.name, changed },
    });
  }

  async function requireLive(
    q: Queryable,
    tenantId: string,
    field = 'tenantId',
    lock?: 'FOR SHARE' | 'FOR UPDATE',
  ): Promise<store.TenantRow> {
    const row = await store.findLive(q, tenantId, lock);
    if (!row) throw new AppError('ACCOUNT_NOT_FOUND', `No account with ${field} ${tenantId}`);
    return row;
  }

  return {
    toAccount,
    requireLive,
    insertAccounts,
    /** Which of the aliases (any case, lower-cased keys) live accounts hold, and the holder's id. */
    aliasHolders: (q: Queryable, aliases: string[]) => store.aliasHolders(q, aliases),
    /** Which of the ids are live accounts. */
    liveIds: (q: Queryable, tenantIds: string[]) => store.liveIds(q, tenantIds),

    /**
     * Creates an account; an id held by a removed account reactivates it with the new fields only, unless
     * `reactivate` is false (a user's sub-account): then that id answers as a live one would (409).
     */
    async create(body: CreateAccount, q: Db = db, opts: { reactivate?: boolean } = {}): Promise<Account> {
      return q.transaction(async (tx) => {
        const tenantId = body.tenantId ?? newId();
        if (body.parentTenantId === tenantId)
          throw new AppError('HIERARCHY_CYCLE', 'An account cannot be its own parent (parentTenantId equals tenantId)');
        if (opts.reactivate === false && body.tenantId && (await store.isRemoved(tx, tenantId))) {
          throw new AppError('ACCOUNT_EXISTS', `An account with tenantId ${tenantId} already exists`);
        }
        if (body.parentTenantId) await requireLive(tx, body.parentTenantId, 'parentTenantId', 'FOR SHARE');
        const row: store.NewTenant = {
          tenant_id: tenantId,
          id: newId(),
          parent_tenant_id: body.parentTenantId ?? null,
          is_reseller: false,
          metadata: {},
          name: tenantId,
          ...toColumns(body),
          alias: body.alias ?? null,
        };
        const written = await aliasWrite(body.alias, () => insertAccounts(tx, [row]));
        if (!written.has(tenantId))
          throw new AppError('ACCOUNT_EXISTS', `An account with tenantId ${tenantId} already exists`);
        return toAccount(await requireLive(tx, tenantId));
      });
    },

    async get(tenantId: string): Promise<Account | undefined> {
      const row = await store.findLive(db, tenantId);
      return row ? toAccount(row) : undefined;
    },

    /** The live account holding an alias (any case); 404 naming the alias when none does. */
    async getByAlias(alias: string): Promise<Account> {
      const row = await store.findLiveByAlias(db, alias);
      if (!row) throw new AppError('ACCOUNT_NOT_FOUND', `No account with alias ${alias}`);
      return toAccount(row);
    },

    async update(tenantId: string, body: UpdateAccount): Promise<Account> {
      const values = toColumns(body);
      if (body.alias !== undefined) values.alias = body.alias;
      if (Object.keys(values).length === 0)
        throw new AppError('VALIDATION', 'The body must set at least one account field');
      return db.transaction(async (tx) => {
        const row = await aliasWrite(body.alias, () => store.updateColumns(tx, tenantId, values));
        if (!row) throw new AppError('ACCOUNT_NOT_FOUND', `No account with tenantId ${tenantId}`);
        await emitUpdated(tx, row, Object.keys(body));
        return toAccount(row);
      });
    },

    async addMetadata(tenantId: string, metadata: Record<string, unknown>): Promise<Account> {
      return db.transaction(async (tx) => {
        const row = await store.mergeMetadata(tx, tenantId, metadata);
        if (!row) throw new AppError('ACCOUNT_NOT_FOUND', `No account with tenantId ${tenantId}`);
        await emitUpdated(tx, row, ['metadata']);
        return toAccount(row);
      });
    },

    async deleteMetadataKey(tenantId: string, key: string): Promise<Account> {
      const row = await db.transaction(async (tx) => {
        const r = await store.removeMetadataKey(tx, tenantId, key);
        if (r) await emitUpdated(tx, r, ['metadata']);
        return r;
      });
      if (row) return toAccount(row);
      await requireLive(db, tenantId);
      throw new AppError('METADATA_KEY_NOT_FOUND', `Account ${tenantId} has no metadata key ${key}`);
    },

    /** Removes the account and (account.removed's subscribers) its users; its sub-accounts move to its parent. */
    async remove(tenantId: string): Promise<Account> {
      return db.transaction(async (tx) => {
        const row = await store.softDelete(tx, tenantId);
        if (!row)
          throw new AppError('ACCOUNT_NOT_FOUND', `No account with tenantId ${tenantId} (it may already be removed)`);
        await deps.events?.bus.publish(tx, 'account.removed', { tenantId });
        // Its sub-accounts moved up to its parent (softDelete): account.moved for each, then account.deleted.
        await deps.events?.emitMany(
          tx,
          row.movedChildren.map((child) => ({
            eventKey: 'account.moved' as const,
            tenantId: child,
            entity: { type: 'account', id: child },
            data: {
              tenantId: child,
              previousParentTenantId: tenantId,
              parentTenantId: row.formerParent,
              reason: 'parent_deleted',
            },
          })),
        );
        await deps.events?.emit(tx, {
          eventKey: 'account.deleted',
          tenantId,
          entity: { type: 'account', id: tenantId },
          data: { tenantId, name: row.name },
        });
        return toAccount(row);
      });
    },

    /** Lists and ids held by the broad-filter cache (tests, diagnostics); undefined when the cache is off. */
    listCacheSize: () => listCache?.size(),

    async list(q: ListQuery) {
      const limit = q._limit ?? 50;
      const page = q._offset ?? 0;
      const tenantIds = q._tenantIds
        ?.split(',')
        .map((s) => s.trim())
        .filter(Boolean);
      const { rows, total } = await listAccounts(
        db,
        {
          limit,
          page,
          filter: q._filter?.trim() || undefined,
          sortBy: q._sortBy ?? 'createdAt',
          order: q._order ?? 'ASC',
          tenantIds: tenantIds && tenantIds.length ? tenantIds : undefined,
        },
        listCache,
      );
      return { items: rows.map(toAccount), total, limit, page };
    },
  };
}
