import { hasherFor } from '../src/modules/credentials/index.ts';
import { hashArgon2id } from '../src/modules/credentials/hashers/index.ts';
import type { Db } from '../src/storage/db.ts';
import { stats } from './lib.ts';
import { LOGIN, M, PASSWORD, type App, type Sizes } from './migration-config.ts';
import { signinHashes } from './migration-hashes.ts';

// ---------------------------------------------------------------------------------------------------------------
// 3. First sign-in per hash type

export async function measureSignin(app: App, db: Db, sizes: Sizes, accounts: string[], log: (l: string) => void) {
  const hashes = await signinHashes();
  const prefix = `s${Date.now().toString(36)}`;
  const out: {
    type: string;
    params: string;
    rawVerify: ReturnType<typeof stats>;
    first: ReturnType<typeof stats>;
    second: ReturnType<typeof stats>;
  }[] = [];
  // Raw cost of the rehash alone (argon2id at Gatehouse's parameters), in this process.
  const rehash: number[] = [];
  for (let i = 0; i < sizes.signinUsers; i++) {
    const s = performance.now();
    await hashArgon2id(PASSWORD);
    rehash.push(performance.now() - s);
  }
  for (const h of hashes) {
    const emails: string[] = [];
    for (let i = 0; i < sizes.signinUsers; i++) {
      const email = `${prefix}-${h.type}-${i}@signin.example`;
      const r = await app.client.request('POST', `${M}/local`, {
        body: {
          email,
          tenantId: accounts[i % accounts.length],
          passwordHash: h.passwordHash,
          passwordHashType: h.type,
          ...(h.passwordHashConfig ? { passwordHashConfig: h.passwordHashConfig } : {}),
          verifyUser: true,
        },
      });
      if (r.status !== 201)
        throw new Error(`migrate ${h.type}: HTTP ${r.status} ${JSON.stringify(r.body).slice(0, 300)}`);
      emails.push(email);
    }
    // The imported hash's own cost, verified in this process against the stored string.
    const stored = (
      await db.query<{ password_hash: string }>('SELECT password_hash FROM users WHERE email = $1', [emails[0]])
    ).rows[0].password_hash;
    const hasher = hasherFor(stored)!;
    const raw: number[] = [];
    for (let i = 0; i < sizes.signinUsers; i++) {
      const s = performance.now();
      if (!(await hasher.verify(PASSWORD, stored))) throw new Error(`${h.type}: the stored hash does not verify`);
      raw.push(performance.now() - s);
    }
    const first: number[] = [];
    const second: number[] = [];
    for (const email of emails) {
      const r = await app.login.request('POST', LOGIN, { body: { email, password: PASSWORD } });
      if (r.status !== 200 || !r.body.accessToken)
        throw new Error(`first sign-in ${h.type}: HTTP ${r.status} ${JSON.stringify(r.body).slice(0, 300)}`);
      first.push(r.ms);
    }
    const after = (
      await db.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM users WHERE email = ANY($1::text[]) AND password_hash LIKE '$argon2id$v=19$m=19456,t=2,p=1$%'`,
        [emails],
      )
    ).rows[0].n;
    if (after !== emails.length) throw new Error(`${h.type}: ${after} of ${emails.length} hashes became argon2id`);
    for (const email of emails) {
      const r = await app.login.request('POST', LOGIN, { body: { email, password: PASSWORD } });
      if (r.status !== 200) throw new Error(`second sign-in ${h.type}: HTTP ${r.status}`);
      second.push(r.ms);
    }
    const row = { type: h.type, params: h.params, rawVerify: stats(raw), first: stats(first), second: stats(second) };
    out.push(row);
    log(
      `    ${h.type.padEnd(16)} first sign-in p50 ${row.first.p50.toFixed(1).padStart(7)} ms (raw verify ${row.rawVerify.p50.toFixed(1)} ms), second ${row.second.p50.toFixed(1)} ms`,
    );
  }
  return { rows: out, rehash: stats(rehash) };
}
