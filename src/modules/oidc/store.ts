import type { Queryable } from '../../storage/db.ts';
import { prepared } from '../../storage/prepared.ts';

/** SQL of the OpenID provider's state: one row per oidc-provider model instance (kind = model name). */

export interface PayloadRow {
  payload: Record<string, unknown>;
  consumed_at: Date | null;
}

// Every provider request reads and writes these rows: the statements are prepared once per connection.
const UPSERT = prepared(`INSERT INTO oidc_payloads (id, kind, payload, grant_id, user_code, uid, expires_at)
     VALUES ($1, $2, $3::jsonb, $4, $5, $6, CASE WHEN $7::int IS NULL THEN NULL ELSE now() + make_interval(secs => $7::int) END)
     ON CONFLICT (kind, id) DO UPDATE SET payload = EXCLUDED.payload, grant_id = EXCLUDED.grant_id,
       user_code = EXCLUDED.user_code, uid = EXCLUDED.uid, expires_at = EXCLUDED.expires_at`);

export async function upsert(
  q: Queryable,
  kind: string,
  id: string,
  payload: Record<string, unknown>,
  expiresIn: number | undefined,
): Promise<void> {
  const str = (v: unknown) => (typeof v === 'string' ? v : null);
  await q.query(UPSERT, [
    id,
    kind,
    JSON.stringify(payload),
    str(payload.grantId),
    str(payload.userCode),
    str(payload.uid),
    expiresIn ?? null,
  ]);
}

const LIVE = '(expires_at IS NULL OR expires_at > now())';
const FIND = prepared(`SELECT payload, consumed_at FROM oidc_payloads WHERE kind = $1 AND id = $2 AND ${LIVE}`);
const FIND_BY = {
  uid: prepared(`SELECT payload, consumed_at FROM oidc_payloads WHERE kind = $1 AND uid = $2 AND ${LIVE} LIMIT 1`),
  user_code: prepared(
    `SELECT payload, consumed_at FROM oidc_payloads WHERE kind = $1 AND user_code = $2 AND ${LIVE} LIMIT 1`,
  ),
};
const CONSUME = prepared(
  'UPDATE oidc_payloads SET consumed_at = now() WHERE kind = $1 AND id = $2 AND consumed_at IS NULL',
);
const DESTROY = prepared('DELETE FROM oidc_payloads WHERE kind = $1 AND id = $2');

export async function find(q: Queryable, kind: string, id: string): Promise<PayloadRow | undefined> {
  return (await q.query<PayloadRow>(FIND, [kind, id])).rows[0];
}

export async function findBy(
  q: Queryable,
  kind: string,
  column: 'uid' | 'user_code',
  value: string,
): Promise<PayloadRow | undefined> {
  return (await q.query<PayloadRow>(FIND_BY[column], [kind, value])).rows[0];
}

export async function consume(q: Queryable, kind: string, id: string): Promise<void> {
  await q.query(CONSUME, [kind, id]);
}

export async function destroy(q: Queryable, kind: string, id: string): Promise<void> {
  await q.query(DESTROY, [kind, id]);
}

/** Everything issued under a grant (codes, tokens, the grant itself, its session link). */
export async function revokeByGrantId(q: Queryable, grantId: string): Promise<void> {
  await q.query('DELETE FROM oidc_payloads WHERE grant_id = $1', [grantId]);
}

/** Whether `token` is a refresh token the provider issued (live or not: the provider answers for it either way). */
export async function isRefreshToken(q: Queryable, token: string): Promise<boolean> {
  return (
    (await q.query("SELECT 1 FROM oidc_payloads WHERE kind = 'RefreshToken' AND id = $1", [token])).rows.length > 0
  );
}
