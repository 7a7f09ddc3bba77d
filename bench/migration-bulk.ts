import type { Db } from '../src/storage/db.ts';
import { stats, type HttpClient } from './lib.ts';
import { M, type App, type Sizes } from './migration-config.ts';
import { vector } from './migration-hashes.ts';

// ---------------------------------------------------------------------------------------------------------------
// Bulk payloads: a fixed, realistic mix

/** Imported hashes for the bulk users (cheap to store; the bulk import never verifies them). */
const BULK_HASHES = [
  vector('bcrypt $2b$ (mkpasswd)'),
  vector('scrypt N=16384 r=8 p=1 keyLen=64'),
  vector('firebase-scrypt memCost=14 rounds=8'),
  vector('pbkdf2 sha256 key=default hex salt=default hex'),
  vector('argon2 -id'),
  vector('sha256 salted prefix hex'),
  vector('sha1 plain hex'),
];

export function bulkUser(prefix: string, n: number, accounts: string[], phoneBase: number): Record<string, unknown> {
  const u: Record<string, unknown> = {
    email: `${prefix}-${n}@bulk.example`,
    tenantId: accounts[n % accounts.length],
    name: `User ${n}`,
  };
  if (n % 2 === 0) {
    const h = BULK_HASHES[(n / 2) % BULK_HASHES.length];
    u.passwordHash = h.passwordHash;
    u.passwordHashType = h.type;
    if (h.passwordHashConfig) u.passwordHashConfig = h.passwordHashConfig;
  }
  if (n % 10 === 3) u.phoneNumber = `+1${phoneBase + n}`;
  if (n % 5 === 1) u.metadata = JSON.stringify({ plan: 'team', n });
  if (n % 3 === 0) u.verifyUser = true;
  return u;
}

// ---------------------------------------------------------------------------------------------------------------
// 1. Bulk import end to end

async function waitAll(client: HttpClient, ids: string[], deadlineMs: number) {
  const done = new Map<string, any>();
  let polls = 0;
  while (done.size < ids.length) {
    for (const id of ids) {
      if (done.has(id)) continue;
      const r = await client.request('GET', `${M}/local/bulk/status/${id}`);
      polls++;
      if (r.status !== 200) throw new Error(`status: HTTP ${r.status} ${JSON.stringify(r.body).slice(0, 300)}`);
      if (r.body.state === 'failed') throw new Error(`migration ${id} failed: ${JSON.stringify(r.body).slice(0, 300)}`);
      if (r.body.state === 'completed') done.set(id, r.body);
      else break; // jobs run in order: poll the earliest unfinished one
    }
    if (done.size < ids.length) await new Promise((r) => setTimeout(r, 20));
    if (performance.now() > deadlineMs)
      throw new Error(`migrations not finished in time (${done.size} of ${ids.length})`);
  }
  return { statuses: ids.map((id) => done.get(id)), polls };
}

export async function measureBulk(app: App, db: Db, sizes: Sizes, accounts: string[], log: (l: string) => void) {
  const prefix = `b${Date.now().toString(36)}`;
  const bodies = Array.from({ length: sizes.requests }, (_, r) => ({
    users: Array.from({ length: sizes.perRequest }, (_, i) =>
      bulkUser(prefix, r * sizes.perRequest + i, accounts, 2_000_000_000),
    ),
  }));
  const bytes = bodies.map((b) => Buffer.byteLength(JSON.stringify(b)));
  const total = sizes.requests * sizes.perRequest;
  const start = performance.now();
  const ids: string[] = [];
  const postMs: number[] = [];
  for (const body of bodies) {
    const r = await app.client.request('POST', `${M}/local/bulk`, { body });
    if (r.status !== 202) throw new Error(`bulk POST: HTTP ${r.status} ${JSON.stringify(r.body).slice(0, 300)}`);
    ids.push(r.body.migrationId);
    postMs.push(r.ms);
  }
  const submitted = performance.now() - start;
  const { statuses, polls } = await waitAll(app.client, ids, start + 3_600_000);
  const endToEnd = performance.now() - start;
  const succeeded = statuses.reduce((a, s) => a + s.succeeded, 0);
  const failed = statuses.reduce((a, s) => a + s.failed, 0);
  const { rows } = await db.query<{ n: number; m: number; r: number; p: number }>(
    `SELECT (SELECT count(*)::int FROM users WHERE email LIKE $1) AS n,
            (SELECT count(*)::int FROM user_tenants ut JOIN users u ON u.id = ut.user_id WHERE u.email LIKE $1) AS m,
            (SELECT count(*)::int FROM user_roles ur JOIN users u ON u.id = ur.user_id WHERE u.email LIKE $1) AS r,
            (SELECT count(*)::int FROM user_phone_numbers p JOIN users u ON u.id = p.user_id WHERE u.email LIKE $1) AS p`,
    [`${prefix}-%`],
  );
  if (succeeded !== total || failed !== 0 || rows[0].n !== total || rows[0].m !== total) {
    throw new Error(
      `bulk imported ${succeeded} (${failed} failed; ${JSON.stringify(rows[0])}) of ${total}: ${JSON.stringify(statuses.find((s) => s.failed)?.errors?.slice(0, 3))}`,
    );
  }
  const t = (s: string) => new Date(s).getTime();
  const jobMs = statuses.map((s) => t(s.completedAt) - t(s.startedAt));
  const serverSpan =
    Math.max(...statuses.map((s) => t(s.completedAt))) - Math.min(...statuses.map((s) => t(s.createdAt)));
  const result = {
    users: total,
    requests: sizes.requests,
    perRequest: sizes.perRequest,
    chunkSize: app.ctx.userMigration.chunkSize,
    requestBytes: stats(bytes),
    rows: rows[0],
    endToEndMs: endToEnd,
    usersPerSecond: total / (endToEnd / 1000),
    submitMs: submitted,
    post: stats(postMs),
    jobMs: stats(jobMs),
    serverSpanMs: serverSpan,
    statusPolls: polls,
  };
  log(
    `    ${total} users in ${(endToEnd / 1000).toFixed(2)} s end to end: ${result.usersPerSecond.toFixed(0)} users/s (submit ${(submitted / 1000).toFixed(2)} s, POST p50 ${result.post.p50.toFixed(1)} ms, max ${result.post.max.toFixed(1)} ms)`,
  );
  return result;
}

/** 202 latency of one request on an idle server: each request's job finishes before the next is sent. */
export async function measureIdleAccept(app: App, sizes: Sizes, accounts: string[], log: (l: string) => void) {
  const prefix = `a${Date.now().toString(36)}`;
  const samples: number[] = [];
  for (let r = 0; r < sizes.idleAccepts; r++) {
    const body = {
      users: Array.from({ length: sizes.perRequest }, (_, i) =>
        bulkUser(prefix, r * sizes.perRequest + i, accounts, 4_000_000_000),
      ),
    };
    const reply = await app.client.request('POST', `${M}/local/bulk`, { body });
    if (reply.status !== 202) throw new Error(`bulk POST: HTTP ${reply.status}`);
    samples.push(reply.ms);
    await waitAll(app.client, [reply.body.migrationId], performance.now() + 600_000);
  }
  const s = stats(samples);
  log(
    `    idle accept of ${sizes.perRequest} users: p50 ${s.p50.toFixed(1)} ms, max ${s.max.toFixed(1)} ms (n=${s.n})`,
  );
  return s;
}
