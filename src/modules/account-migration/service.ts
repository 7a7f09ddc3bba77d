import { Compile } from 'typebox/compile';
import type { EventsService } from '../events/index.ts';
import type { TLocalizedValidationError } from 'typebox/error';
import { AppError } from '../../http/errors.ts';
import type { JobHandler, JobRunner } from '../../jobs/runner.ts';
import { newId } from '../../lib/crypto.ts';
import type { Db } from '../../storage/db.ts';
import { toColumns, type NewTenant, type TenantsService } from '../tenants/index.ts';
import { createMigrationEngine, type ChunkItem, type ItemError } from './engine.ts';
import { MAX_MIGRATION_ITEMS, MigratedAccount } from './schema.ts';

export const TENANTS_MIGRATION_JOB = 'migration.tenants';

/** The tenants service's account writes and the reads that check an import chunk before them. */
type AccountWrites = Pick<TenantsService, 'insertAccounts' | 'aliasHolders' | 'liveIds'>;

export interface AccountMigrationDeps {
  db: Db;
  jobs: Pick<JobRunner, 'enqueue' | 'notify'>;
  /** Accounts are written with the tenants service's `insertAccounts` (which runs its creation hooks). */
  tenants: AccountWrites;
  chunkSize: number;
  /** The outbox: migration.completed. */
  events?: EventsService;
}

const checkAccount = Compile(MigratedAccount);
const FIELD_SCHEMAS = MigratedAccount.properties as Record<string, { description?: string } | undefined>;

/** TypeBox errors → one message naming each field and its rule: `name must not have more than 255 characters`. */
export function describeItemErrors(errors: TLocalizedValidationError[]): string {
  const field = (path: string) => path.split('/').filter(Boolean).join('.');
  const anyOfPaths = new Set(errors.filter((e) => e.keyword === 'anyOf').map((e) => e.instancePath));
  const messages: string[] = [];
  for (const e of errors) {
    const where = field(e.instancePath) || 'item';
    if (e.keyword === 'required') {
      for (const p of e.params.requiredProperties)
        messages.push(`${[field(e.instancePath), p].filter(Boolean).join('.')} is required`);
    } else if (e.keyword === 'anyOf') {
      const types = errors
        .filter((x) => x.keyword === 'type' && x.instancePath === e.instancePath)
        .map((x) => String((x.params as { type: unknown }).type));
      messages.push(`${where} must be ${types.length ? types.join(' or ') : 'of an allowed type'}`);
    } else if (anyOfPaths.has(e.instancePath)) {
      continue; // the branches of a union: summarised by its anyOf entry
    } else if (e.keyword === 'pattern' && FIELD_SCHEMAS[where]?.description) {
      messages.push(`${where} must be ${FIELD_SCHEMAS[where]!.description}`);
    } else {
      messages.push(`${where} ${e.message}`);
    }
  }
  return [...new Set(messages)].join('; ');
}

/** A request item (tenant id or object) → the row to insert, or the reason it cannot be imported. */
export function parseAccountItem(item: unknown): { row: NewTenant; parent: string | null } | { error: string } {
  const body = typeof item === 'string' ? { tenantId: item } : item;
  if (!checkAccount.Check(body)) {
    const message = describeItemErrors(checkAccount.Errors(body));
    return { error: typeof item === 'string' ? message.replace(/^tenantId /, 'the tenant id ') : message };
  }
  if (body.parentTenantId === body.tenantId) return { error: 'parentTenantId must differ from tenantId' };
  let columns: Record<string, unknown>;
  try {
    columns = toColumns(body);
  } catch (err) {
    if (err instanceof AppError) return { error: err.message };
    throw err;
  }
  const parent = body.parentTenantId ?? null;
  return {
    parent,
    row: {
      tenant_id: body.tenantId,
      id: newId(),
      parent_tenant_id: parent,
      is_reseller: false,
      metadata: {},
      name: body.tenantId,
      ...columns,
      alias: body.alias ?? null,
    },
  };
}

/**
 * Aliases are unique among live accounts (any case): an item naming one another account holds, or one an earlier
 * item of the chunk names, is refused (409) before the insert, so one item cannot fail the whole chunk.
 */
async function checkAliases<R extends { index: number; row: NewTenant }>(
  tx: Db,
  rows: R[],
  tenants: AccountWrites,
): Promise<{ kept: R[]; errors: ItemError[] }> {
  const named = rows.filter((r) => typeof r.row.alias === 'string');
  const holders = await tenants.aliasHolders(
    tx,
    named.map((r) => r.row.alias as string),
  );
  const seen = new Set<string>();
  const kept: R[] = [];
  const errors: ItemError[] = [];
  for (const r of rows) {
    const alias = typeof r.row.alias === 'string' ? r.row.alias : undefined;
    const key = alias?.toLowerCase();
    const holder = key ? holders.get(key) : undefined;
    if (key && ((holder && holder !== r.row.tenant_id) || seen.has(key))) {
      const message = `alias ${alias} is already the alias of another account`;
      errors.push({ index: r.index, key: r.row.tenant_id, code: 'ACCOUNT_ALIAS_TAKEN', message });
      continue;
    }
    if (key) seen.add(key);
    kept.push(r);
  }
  return { kept, errors };
}

/**
 * One chunk of accounts (repeated ids already removed by the engine): checks each item, checks each parent (a live
 * account, or an earlier item of this batch that is being imported in this chunk or was in an earlier one), then
 * inserts the rest in one statement. An id that is live already comes back missing from `insertAccounts`.
 */
export async function importAccounts(
  tx: Db,
  items: ChunkItem[],
  tenants: AccountWrites,
): Promise<{ succeeded: number; errors: ItemError[] }> {
  const errors: ItemError[] = [];
  const valid: { index: number; row: NewTenant; parent: string | null }[] = [];
  for (const c of items) {
    const parsed = parseAccountItem(c.item);
    if ('error' in parsed) errors.push({ index: c.index, key: c.key, code: 'VALIDATION', message: parsed.error });
    else valid.push({ index: c.index, ...parsed });
  }

  const live = await tenants.liveIds(tx, [
    ...new Set(valid.map((v) => v.parent).filter((p): p is string => p !== null)),
  ]);
  const accepted = new Set<string>();
  const rows: { index: number; row: NewTenant }[] = [];
  for (const v of valid) {
    if (v.parent !== null && !live.has(v.parent) && !accepted.has(v.parent)) {
      errors.push({
        index: v.index,
        key: v.row.tenant_id,
        code: 'ACCOUNT_NOT_FOUND',
        message: `parentTenantId ${v.parent} is neither a live account nor an account imported earlier in this migration`,
      });
      continue;
    }
    accepted.add(v.row.tenant_id);
    rows.push(v);
  }
  const aliasErrors = await checkAliases(tx, rows, tenants);
  errors.push(...aliasErrors.errors);
  rows.splice(0, rows.length, ...aliasErrors.kept);

  // Parent and child may go in the same statement: the foreign key is checked at the end of the statement.
  const written = await tenants.insertAccounts(
    tx,
    rows.map((r) => r.row),
  );
  for (const r of rows) {
    if (!written.has(r.row.tenant_id)) {
      errors.push({
        index: r.index,
        key: r.row.tenant_id,
        code: 'ACCOUNT_EXISTS',
        message: `An account with tenantId ${r.row.tenant_id} already exists`,
      });
    }
  }
  return { succeeded: written.size, errors };
}

export type AccountMigrationService = ReturnType<typeof createAccountMigrationService>;

/** Account migration: POST a batch of tenant ids or account objects, poll its status; a durable job imports it. */
export function createAccountMigrationService(deps: AccountMigrationDeps) {
  const engine = createMigrationEngine(deps, {
    kind: 'tenants',
    jobKind: TENANTS_MIGRATION_JOB,
    field: 'tenants',
    keyField: 'tenantId',
    errorKey: 'id',
    maxItems: MAX_MIGRATION_ITEMS,
    label: 'account migration',
    process: (tx, items) => importAccounts(tx, items, deps.tenants),
  });
  return {
    /** Answers at once with the id; the accounts are imported by the job. */
    start: (tenants: unknown[]) => engine.submit(tenants),
    status: (migrationId: string) => engine.status(migrationId),
    jobHandler: engine.handler,
  };
}

/** Job handlers keyed by job kind, for the runner. */
export function accountMigrationJobs(service: AccountMigrationService): Record<string, JobHandler> {
  return { [TENANTS_MIGRATION_JOB]: service.jobHandler };
}
