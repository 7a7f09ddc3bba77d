import { createHash } from 'node:crypto';
import type { Db } from '../src/storage/db.ts';
import { BENCH_ACCOUNT, PASSWORD, type IdentityApp } from './identity-config.ts';

// ---------------------------------------------------------------------------------------------------------------
// Seeding (not measured)

const uuidOf = (seed: string) => {
  const h = createHash('md5').update(seed).digest('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20, 32)}`;
};
export const seededUserId = (i: number) => uuidOf(`u${i}`);
const ADMIN_ROLE = 'bd3e633c-ebd7-4f44-8d87-7f05f9e34ac9';
const READ_ONLY_ROLE = 'c784abeb-f295-45fb-84ed-19a1652cfb43';

/**
 * `accounts` accounts and `users` users: every user a member of account i % accounts (its active account), one in ten
 * also of the next account; every membership holds the built-in read-only role, one user in a hundred also admin in
 * its first account; one user in five has a phone number. The password hash is a real argon2id string.
 */
export async function seedUsers(db: Db, users: number, accounts: number, passwordHash: string) {
  const start = performance.now();
  await db.query(`
    INSERT INTO tenants (tenant_id, id, name, status, metadata, created_at, updated_at)
    SELECT 'acct-' || i, md5('acct' || i)::uuid, 'Account ' || i, 'active', '{}'::jsonb,
           timestamptz '2023-01-01 00:00:00+00' + i * interval '1 hour', timestamptz '2023-01-01 00:00:00+00' + i * interval '1 hour'
      FROM generate_series(0, ${accounts - 1}) AS i`);
  await db.query(
    `INSERT INTO users (id, email, username, name, verified, metadata, vendor_metadata, password_hash, active_tenant_id, created_at, updated_at, last_login)
     SELECT md5('u' || i)::uuid, 'user' || i || '@bench.example', CASE WHEN i % 3 = 0 THEN 'user' || i END, 'User ' || i, i % 4 <> 0,
            jsonb_build_object('plan', (ARRAY['free','team','business'])[1 + i % 3], 'seat', i % 250), '{}'::jsonb,
            $1, 'acct-' || (i % ${accounts}),
            timestamptz '2023-01-01 00:00:00+00' + i * interval '1 minute', timestamptz '2023-01-01 00:00:00+00' + i * interval '1 minute',
            CASE WHEN i % 2 = 0 THEN timestamptz '2024-06-01 00:00:00+00' + i * interval '1 second' END
       FROM generate_series(1, ${users}) AS i`,
    [passwordHash],
  );
  await db.query(`
    INSERT INTO user_tenants (tenant_id, user_id, sub_account_access_allowed, created_at)
    SELECT 'acct-' || (i % ${accounts}), md5('u' || i)::uuid, false, timestamptz '2023-01-01 00:00:00+00' + i * interval '1 minute'
      FROM generate_series(1, ${users}) AS i
    UNION ALL
    SELECT 'acct-' || ((i + 1) % ${accounts}), md5('u' || i)::uuid, false, timestamptz '2023-06-01 00:00:00+00' + i * interval '1 minute'
      FROM generate_series(1, ${users}) AS i WHERE i % 10 = 0`);
  await db.query(`
    INSERT INTO user_roles (tenant_id, user_id, role_id)
    SELECT tenant_id, user_id, '${READ_ONLY_ROLE}'::uuid FROM user_tenants WHERE tenant_id LIKE 'acct-%'
    UNION ALL
    SELECT 'acct-' || (i % ${accounts}), md5('u' || i)::uuid, '${ADMIN_ROLE}'::uuid FROM generate_series(1, ${users}) AS i WHERE i % 100 = 0`);
  await db.query(`
    INSERT INTO user_phone_numbers (phone_number, user_id, is_primary)
    SELECT '+1555' || lpad(i::text, 7, '0'), md5('u' || i)::uuid, true FROM generate_series(1, ${users}) AS i WHERE i % 5 = 0`);
  const elapsed = performance.now() - start;
  const count = async (sql: string) => (await db.query<{ n: number }>(sql)).rows[0].n;
  return {
    ms: elapsed,
    users: await count(`SELECT count(*)::int AS n FROM users WHERE email LIKE '%@bench.example'`),
    memberships: await count(`SELECT count(*)::int AS n FROM user_tenants WHERE tenant_id LIKE 'acct-%'`),
    roleAssignments: await count(`SELECT count(*)::int AS n FROM user_roles WHERE tenant_id LIKE 'acct-%'`),
    phones: await count('SELECT count(*)::int AS n FROM user_phone_numbers'),
  };
}

/** An account and `n` users with a password, through the API (their hashes are the app's own argon2id). */
export async function createSignInUsers(app: IdentityApp, n: number): Promise<{ emails: string[]; hash: string }> {
  const acct = await app.client.request('POST', '/tenants/resources/tenants/v1', {
    body: { tenantId: BENCH_ACCOUNT, name: 'Identity bench' },
  });
  if (acct.status !== 201)
    throw new Error(`create account: HTTP ${acct.status} ${JSON.stringify(acct.body).slice(0, 300)}`);
  const emails: string[] = [];
  for (let i = 0; i < n; i++) {
    const email = `signin-${i}@bench.example`;
    const r = await app.client.request('POST', '/identity/resources/users/v1', {
      body: { email, password: PASSWORD, name: `Sign-in ${i}` },
      headers: { 'gatehouse-tenant-id': BENCH_ACCOUNT },
    });
    if (r.status !== 201) throw new Error(`create user: HTTP ${r.status} ${JSON.stringify(r.body).slice(0, 300)}`);
    emails.push(email);
  }
  const { rows } = await app.ctx.db.query<{ password_hash: string }>(
    'SELECT password_hash FROM users WHERE email = $1',
    [emails[0]],
  );
  return { emails, hash: rows[0].password_hash };
}
