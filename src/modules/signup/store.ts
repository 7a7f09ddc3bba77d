import type { Queryable } from '../../storage/db.ts';

/** Users who signed up and have not activated yet (table `pending_activations`). */
export async function markPending(q: Queryable, userId: string): Promise<void> {
  await q.query('INSERT INTO pending_activations (user_id) VALUES ($1) ON CONFLICT DO NOTHING', [userId]);
}

/** The users awaiting activation, as a subquery (one row per user) for another module's statement to join. */
export const PENDING_ACTIVATIONS_SQL = 'SELECT user_id FROM pending_activations';

/** Whether the user `userExpr` (SQL) awaits activation, as a SQL expression (the sign-in gate's prefetch). */
export const pendingSql = (userExpr: string) =>
  `EXISTS (SELECT 1 FROM pending_activations WHERE user_id = ${userExpr})`;

export async function isPending(q: Queryable, userId: string): Promise<boolean> {
  const { rows } = await q.query<{ pending: boolean }>(`SELECT ${pendingSql('$1')} AS pending`, [userId]);
  return rows[0].pending;
}

/** Ends the pending state; answers whether the user was pending. */
export async function clearPending(q: Queryable, userId: string): Promise<boolean> {
  const r = await q.query('DELETE FROM pending_activations WHERE user_id = $1', [userId]);
  return r.rowCount > 0;
}
