import type { Queryable } from '../../storage/db.ts';

// The phone codes of the phone routes; the numbers themselves are the users module's (its phones.ts).

export interface PhoneCodeRow {
  id: string;
  purpose: 'verify' | 'delete';
  user_id: string;
  phone_number: string;
  code_hash: string;
  attempts: number;
  expires_at: Date;
  used_at: Date | null;
}

export async function insertCode(
  q: Queryable,
  c: {
    id: string;
    purpose: PhoneCodeRow['purpose'];
    userId: string;
    phone: string;
    codeHash: string;
    ttlSeconds: number;
  },
): Promise<void> {
  // A new code replaces the user's earlier unused ones of the same purpose.
  await q.query('UPDATE phone_codes SET used_at = now() WHERE user_id = $1 AND purpose = $2 AND used_at IS NULL', [
    c.userId,
    c.purpose,
  ]);
  await q.query(
    `INSERT INTO phone_codes (id, purpose, user_id, phone_number, code_hash, expires_at) VALUES ($1, $2, $3, $4, $5, now() + make_interval(secs => $6))`,
    [c.id, c.purpose, c.userId, c.phone, c.codeHash, c.ttlSeconds],
  );
}

export async function findCode(q: Queryable, id: string): Promise<PhoneCodeRow | undefined> {
  const { rows } = await q.query<PhoneCodeRow>('SELECT * FROM phone_codes WHERE id = $1 FOR UPDATE', [id]);
  return rows[0];
}

export async function countAttempt(q: Queryable, id: string, burn: boolean): Promise<void> {
  await q.query(`UPDATE phone_codes SET attempts = attempts + 1${burn ? ', used_at = now()' : ''} WHERE id = $1`, [id]);
}

export async function useCode(q: Queryable, id: string): Promise<void> {
  await q.query('UPDATE phone_codes SET used_at = now() WHERE id = $1', [id]);
}
