import type { Queryable } from '../../storage/db.ts';
import * as store from './store.ts';
import type { MigrationKind } from './store.ts';

// A migration whose items another module fetches first (the user migration from an identity provider): the row exists,
// pending with no items, until the fetch job fills it (and queues the bulk job) or fails it.

/** The row of a migration whose items are not fetched yet: pending, no items. */
export const insertEmptyMigration = (q: Queryable, id: string, kind: MigrationKind): Promise<void> =>
  store.insertMigration(q, { id, kind, items: [] });

/** The fetched items become a pending migration's items (nothing happens once it has started or failed). */
export async function fillMigration(q: Queryable, id: string, kind: MigrationKind, items: unknown[]): Promise<void> {
  await q.query(
    `UPDATE migrations SET items = $2::jsonb, total = $3 WHERE id = $1 AND kind = $4 AND state = 'pending'`,
    [id, JSON.stringify(items), items.length, kind],
  );
}

/** A migration whose fetch or job failed for good; one that has already finished stays as it is. */
export const failMigration = (q: Queryable, id: string, reason: string): Promise<void> =>
  store.markFailed(q, id, reason);

/** Why the migration failed (null when it did not, or when no reason was stored). */
export async function migrationFailure(q: Queryable, id: string): Promise<string | null> {
  const { rows } = await q.query<{ failure: string | null }>('SELECT failure FROM migrations WHERE id = $1', [id]);
  return rows[0]?.failure ?? null;
}
