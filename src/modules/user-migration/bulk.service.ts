import { AppError } from '../../http/errors.ts';
import { isUniqueViolation } from '../../lib/pg-errors.ts';
import type { Db, Queryable } from '../../storage/db.ts';
import { describeItemErrors, type ChunkItem, type ItemError } from '../account-migration/index.ts';
import type { UserCreation } from '../users/index.ts';
import * as bulkStore from './bulk.store.ts';
import { checkBody, newUserOf, prepare, type Prepared } from './prepare.ts';
import * as store from './store.ts';

export interface BulkImportDeps {
  kek: Buffer;
  /** The users module's creation: the batch goes through its `createMany`. */
  creation: UserCreation;
  /** The roles resolver of a prepared user (service.ts), with a per-chunk cache of its queries. */
  rolesFor: (tx: Queryable, p: Prepared, once: Once) => () => Promise<string[] | undefined>;
  /** Writes one prepared user as the single migration does (its checks, rows and event); throws AppError. */
  write: (tx: Queryable, p: Prepared, appIds: string[]) => Promise<string>;
}

/** Runs `f` once per key (its promise, failure included, is shared). */
export type Once = <T>(key: string, f: () => Promise<T>) => Promise<T>;

type Entry = { c: ChunkItem; p: Prepared };

export const noApplication = () =>
  new AppError('NO_DEFAULT_APPLICATION', 'Migrated users need a default or auto-assign application; create one first');

/**
 * The chunk processor of the bulk job (the account-migration engine calls it inside the chunk's transaction).
 *
 * In batches: every item is checked in JS, then the users module's `createMany` decides the items in order exactly as
 * one creation after another would (one statement reads what its checks need, one writes every accepted user with
 * its `user.created`), and one more statement gives the accepted users the applications. Every rejected item is one
 * error entry with the code and message the single migration gives.
 */
export function createBulkImport(deps: BulkImportDeps) {
  /**
   * Fallback, one item at a time: each user in its own savepoint, so a rejected user (even by a constraint, when a
   * concurrent request took its email or phone) leaves nothing and the others still land.
   */
  async function importOneByOne(tx: Db, items: Entry[], appIds: string[], errors: ItemError[]): Promise<number> {
    let succeeded = 0;
    for (const { c, p } of items) {
      await tx.query('SAVEPOINT migrate_user');
      try {
        await deps.write(tx, p, appIds);
        await tx.query('RELEASE SAVEPOINT migrate_user');
        succeeded++;
      } catch (err) {
        const known =
          err instanceof AppError
            ? err
            : isUniqueViolation(err)
              ? new AppError(
                  'USER_EXISTS',
                  `A user with this email, username or phone number already exists (${(err as Error).message})`,
                )
              : undefined;
        if (!known) throw err; // the chunk rolls back and the job retries it
        await tx.query('ROLLBACK TO SAVEPOINT migrate_user');
        errors.push({ index: c.index, key: c.key, code: known.code, message: known.message });
      }
    }
    return succeeded;
  }

  return async function importChunk(tx: Db, items: ChunkItem[]): Promise<{ succeeded: number; errors: ItemError[] }> {
    const errors: ItemError[] = [];

    // 1. What needs no database.
    const checked: Entry[] = [];
    for (const c of items) {
      if (!checkBody.Check(c.item)) {
        errors.push({
          index: c.index,
          key: c.key,
          code: 'VALIDATION',
          message: describeItemErrors(checkBody.Errors(c.item)),
        });
        continue;
      }
      try {
        checked.push({ c, p: prepare(c.item) });
      } catch (err) {
        if (!(err instanceof AppError)) throw err;
        errors.push({ index: c.index, key: c.key, code: err.code, message: err.message });
      }
    }

    // Role queries (explicit roleIds, provider role names) once per distinct list of the chunk.
    const cached = new Map<string, Promise<unknown>>();
    const once: Once = <T>(key: string, f: () => Promise<T>) => {
      if (!cached.has(key)) cached.set(key, f());
      return cached.get(key) as Promise<T>;
    };

    // 2. The users, in order, by the users module. A unique violation means a concurrent writer took a key after the
    // checks: the users then go one by one (each in a savepoint), which gives each its own outcome.
    await tx.query('SAVEPOINT migrate_chunk');
    let outcome;
    try {
      const list = checked.map(({ p }) => newUserOf(p, deps.kek, deps.rolesFor(tx, p, once)));
      outcome = await deps.creation.createMany(tx, list);
    } catch (err) {
      if (!isUniqueViolation(err)) throw err;
      await tx.query('ROLLBACK TO SAVEPOINT migrate_chunk');
      const appIds = await store.autoApplicationIds(tx);
      if (appIds.length === 0) throw noApplication();
      return { succeeded: await importOneByOne(tx, checked, appIds, errors), errors };
    }
    await tx.query('RELEASE SAVEPOINT migrate_chunk');
    for (const r of outcome.rejected) {
      const { c } = checked[r.index];
      errors.push({ index: c.index, key: c.key, code: r.error.code, message: r.error.message });
    }

    // 3. Interface rule 6: every migrated user joins the default and auto-assign applications, and there must be one
    // (else the chunk fails and the job retries it).
    const created = outcome.created.map((u) => ({ id: u.id, tenantId: checked[u.index].p.body.tenantId }));
    if ((await bulkStore.assignAutoApplications(tx, created)) === 0) throw noApplication();
    return { succeeded: created.length, errors };
  };
}
