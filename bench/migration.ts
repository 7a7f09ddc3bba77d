import { pbkdf2Sync, randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { hash as argon2Hash, Algorithm } from '@node-rs/argon2';
import { hashSync as bcryptHash } from '@node-rs/bcrypt';
import pino from 'pino';
import { loadConfig } from '../src/config.ts';
import { createContext, LOG_REDACT } from '../src/context.ts';
import { hasherFor, importerFor } from '../src/modules/credentials/index.ts';
import { hashArgon2id } from '../src/modules/credentials/hashers/index.ts';
import { buildApp } from '../src/routes.ts';
import type { ClosableDb, Db } from '../src/storage/db.ts';
import {
  BENCH_ENCRYPTION_KEY,
  BENCH_VENDOR,
  httpClient,
  ms,
  openBenchDb,
  REPO_ROOT,
  stats,
  type AreaResult,
  type BenchDb,
  type BenchOptions,
  type HttpClient,
  type Table,
  RAISED_SIGNIN_LIMITS,
  startBenchApp,
} from './lib.ts';

/**
 * User migration through the real HTTP stack, in-process:
 *  - bulk:    N users in N/1000 POST .../local/bulk requests (half with an imported hash, half without; some with a
 *             phone number, metadata, verifyUser), users per second end to end until every status is "completed";
 *             then, on the same database, the raw insert rate of the same rows (multi-row INSERTs of users,
 *             memberships, role assignments, applications and phones, no HTTP, no job, no checks): the ceiling.
 *  - accept:  the time to answer 202 to one 1000-user request, while the import jobs run (the bulk run) and on an
 *             idle server.
 *  - signin:  the first sign-in of an imported user per hash type (verify the imported hash, rehash to argon2id in the
 *             sign-in transaction), and a second sign-in of the same users (argon2id, no rehash) for comparison.
 */

const M = '/identity/resources/migrations/v1';
const LOGIN = '/identity/resources/auth/v1/user';
const BULK_TARGET_USERS_PER_S = 5000;
const ACCEPT_TARGET_MS = 200;
const PASSWORD = 'Corr3ct horse battery staple! é';

interface Sizes {
  requests: number;
  perRequest: number;
  accounts: number;
  idleAccepts: number;
  signinUsers: number;
}
const FULL: Sizes = { requests: 100, perRequest: 1000, accounts: 20, idleAccepts: 10, signinUsers: 10 };
const QUICK: Sizes = { requests: 5, perRequest: 200, accounts: 4, idleAccepts: 2, signinUsers: 2 };
/** BENCH_MIGRATION_REQUESTS overrides the number of bulk requests (development runs; the figures say so). */
const requestsOverride = Number(process.env.BENCH_MIGRATION_REQUESTS) || undefined;

// ---------------------------------------------------------------------------------------------------------------
// The app (as startBenchApp, with the sign-in limits raised: every sign-in comes from 127.0.0.1)

async function startApp(bdb: BenchDb, db: ClosableDb) {
  // BENCH_JOB_CHUNK_SIZE tries another chunk size (users per job transaction) than the default (per store: 1000 on
  // PostgreSQL, 100 on PGlite; see defaultChunkSize in src/modules/user-migration/service.ts).
  const chunk: Record<string, string> = process.env.BENCH_JOB_CHUNK_SIZE ? { JOB_CHUNK_SIZE: process.env.BENCH_JOB_CHUNK_SIZE } : {};
  const app = await startBenchApp(bdb, db, { jobs: true, env: { ...RAISED_SIGNIN_LIMITS, ...chunk } });
  return { ...app, login: app.newClient() };
}
type App = Awaited<ReturnType<typeof startApp>>;

// ---------------------------------------------------------------------------------------------------------------
// Imported hashes

interface Vector {
  name: string;
  type: string;
  password: string;
  passwordHash: string;
  passwordHashConfig?: string;
}
const VECTORS = (JSON.parse(readFileSync(join(REPO_ROOT, 'test', 'fixtures', 'hash-vectors.json'), 'utf8')) as { vectors: Vector[] }).vectors;
const vector = (name: string) => {
  const v = VECTORS.find((x) => x.name === name);
  if (!v) throw new Error(`no hash vector named ${name}`);
  return v;
};

/**
 * One imported hash per type, at the cost the source systems use by default (bcrypt 10, scrypt N=2^14, Firebase's
 * memCost 14 / rounds 8, pbkdf2-sha256 600,000 iterations (OWASP 2023), argon2id RFC 9106's second recommendation
 * t=3 m=64 MiB p=4, salted sha256/sha1). Made once per run; scrypt, firebase-scrypt and sha come from the committed
 * vectors (made by independent tools).
 */
async function signinHashes(): Promise<{ type: string; params: string; passwordHash: string; passwordHashConfig?: string }[]> {
  const salt = randomBytes(16).toString('hex');
  const key = pbkdf2Sync(PASSWORD, Buffer.from(salt, 'hex'), 600_000, 32, 'sha256').toString('hex');
  const scrypt = vector('scrypt N=16384 r=8 p=1 keyLen=64');
  const firebase = vector('firebase-scrypt memCost=14 rounds=8');
  const sha256 = vector('sha256 salted prefix hex');
  const sha1 = vector('sha1 salted prefix hex');
  return [
    { type: 'bcrypt', params: '$2b$, cost 10', passwordHash: bcryptHash(PASSWORD, 10) },
    { type: 'scrypt', params: 'N=16384 r=8 p=1 keyLen=64', passwordHash: scrypt.passwordHash, passwordHashConfig: scrypt.passwordHashConfig },
    { type: 'firebase-scrypt', params: 'memCost=14 rounds=8', passwordHash: firebase.passwordHash, passwordHashConfig: firebase.passwordHashConfig },
    { type: 'pbkdf2', params: 'sha256, 600,000 iterations, keyLen 32', passwordHash: `${salt}$${key}`, passwordHashConfig: JSON.stringify({ saltSeparator: '$', iterations: 600_000, keyLen: 32, digest: 'sha256' }) },
    {
      type: 'argon2',
      params: 'argon2id m=65536 t=3 p=4',
      passwordHash: await argon2Hash(PASSWORD, { algorithm: Algorithm.Argon2id, memoryCost: 65536, timeCost: 3, parallelism: 4 }),
    },
    { type: 'sha256', params: 'salted (prefix), hex', passwordHash: sha256.passwordHash, passwordHashConfig: sha256.passwordHashConfig },
    { type: 'sha1', params: 'salted (prefix), hex', passwordHash: sha1.passwordHash, passwordHashConfig: sha1.passwordHashConfig },
  ];
}

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

function bulkUser(prefix: string, n: number, accounts: string[], phoneBase: number): Record<string, unknown> {
  const u: Record<string, unknown> = { email: `${prefix}-${n}@bulk.example`, tenantId: accounts[n % accounts.length], name: `User ${n}` };
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
    if (performance.now() > deadlineMs) throw new Error(`migrations not finished in time (${done.size} of ${ids.length})`);
  }
  return { statuses: ids.map((id) => done.get(id)), polls };
}

async function measureBulk(app: App, db: Db, sizes: Sizes, accounts: string[], log: (l: string) => void) {
  const prefix = `b${Date.now().toString(36)}`;
  const bodies = Array.from({ length: sizes.requests }, (_, r) => ({ users: Array.from({ length: sizes.perRequest }, (_, i) => bulkUser(prefix, r * sizes.perRequest + i, accounts, 2_000_000_000)) }));
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
    throw new Error(`bulk imported ${succeeded} (${failed} failed; ${JSON.stringify(rows[0])}) of ${total}: ${JSON.stringify(statuses.find((s) => s.failed)?.errors?.slice(0, 3))}`);
  }
  const t = (s: string) => new Date(s).getTime();
  const jobMs = statuses.map((s) => t(s.completedAt) - t(s.startedAt));
  const serverSpan = Math.max(...statuses.map((s) => t(s.completedAt))) - Math.min(...statuses.map((s) => t(s.createdAt)));
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
  log(`    ${total} users in ${(endToEnd / 1000).toFixed(2)} s end to end: ${result.usersPerSecond.toFixed(0)} users/s (submit ${(submitted / 1000).toFixed(2)} s, POST p50 ${result.post.p50.toFixed(1)} ms, max ${result.post.max.toFixed(1)} ms)`);
  return result;
}

/** 202 latency of one request on an idle server: each request's job finishes before the next is sent. */
async function measureIdleAccept(app: App, sizes: Sizes, accounts: string[], log: (l: string) => void) {
  const prefix = `a${Date.now().toString(36)}`;
  const samples: number[] = [];
  for (let r = 0; r < sizes.idleAccepts; r++) {
    const body = { users: Array.from({ length: sizes.perRequest }, (_, i) => bulkUser(prefix, r * sizes.perRequest + i, accounts, 4_000_000_000)) };
    const reply = await app.client.request('POST', `${M}/local/bulk`, { body });
    if (reply.status !== 202) throw new Error(`bulk POST: HTTP ${reply.status}`);
    samples.push(reply.ms);
    await waitAll(app.client, [reply.body.migrationId], performance.now() + 600_000);
  }
  const s = stats(samples);
  log(`    idle accept of ${sizes.perRequest} users: p50 ${s.p50.toFixed(1)} ms, max ${s.max.toFixed(1)} ms (n=${s.n})`);
  return s;
}

// ---------------------------------------------------------------------------------------------------------------
// Raw insert rate: the same rows straight into the tables, one multi-row INSERT per table per 1000 users

async function measureRawInsert(db: Db, sizes: Sizes, accounts: string[], log: (l: string) => void) {
  const prefix = `r${Date.now().toString(36)}`;
  const roleIds = new Map<string, string[]>();
  for (const a of accounts) {
    const { rows } = await db.query<{ id: string }>(`SELECT id::text FROM roles WHERE (tenant_id IS NULL OR tenant_id = $1) AND is_default`, [a]);
    roleIds.set(a, rows.map((r) => r.id));
  }
  const apps = (await db.query<{ id: string }>('SELECT id::text FROM applications WHERE is_active AND (is_default OR auto_assign)')).rows.map((r) => r.id);
  const total = sizes.requests * sizes.perRequest;
  const start = performance.now();
  for (let r = 0; r < sizes.requests; r++) {
    const users = Array.from({ length: sizes.perRequest }, (_, i) => {
      const n = r * sizes.perRequest + i;
      const u = bulkUser(prefix, n, accounts, 3_000_000_000);
      const stored = typeof u.passwordHash === 'string' ? importerFor(String(u.passwordHashType))!.imports!.store(u.passwordHash, u.passwordHashConfig ? JSON.parse(String(u.passwordHashConfig)) : undefined) : null;
      return {
        id: crypto.randomUUID(),
        email: String(u.email),
        name: String(u.name),
        verified: u.verifyUser === true,
        metadata: u.metadata ? JSON.parse(String(u.metadata)) : {},
        password_hash: stored,
        must_reset_password: stored === null,
        tenant_id: String(u.tenantId),
        phone: (u.phoneNumber as string | undefined) ?? null,
      };
    });
    await db.transaction(async (tx) => {
      await tx.query(
        `INSERT INTO users (id, email, name, verified, provider, metadata, vendor_metadata, password_hash, must_reset_password, active_tenant_id)
         SELECT id, email, name, verified, 'local', metadata, '{}'::jsonb, password_hash, must_reset_password, tenant_id
         FROM jsonb_to_recordset($1::jsonb) AS x(id uuid, email text, name text, verified boolean, metadata jsonb, password_hash text, must_reset_password boolean, tenant_id text)`,
        [JSON.stringify(users)],
      );
      const pairs = JSON.stringify(users.map((u) => ({ t: u.tenant_id, u: u.id })));
      await tx.query(`INSERT INTO user_tenants (tenant_id, user_id, sub_account_access_allowed) SELECT t, u, true FROM jsonb_to_recordset($1::jsonb) AS x(t text, u uuid)`, [pairs]);
      await tx.query(
        `INSERT INTO user_roles (tenant_id, user_id, role_id) SELECT t, u, r FROM jsonb_to_recordset($1::jsonb) AS x(t text, u uuid, r uuid)`,
        [JSON.stringify(users.flatMap((u) => roleIds.get(u.tenant_id)!.map((rid) => ({ t: u.tenant_id, u: u.id, r: rid }))))],
      );
      await tx.query(
        `INSERT INTO user_applications (app_id, tenant_id, user_id) SELECT a, t, u FROM jsonb_to_recordset($1::jsonb) AS x(t text, u uuid), unnest($2::uuid[]) AS a`,
        [pairs, apps],
      );
      const phones = users.filter((u) => u.phone);
      if (phones.length) {
        await tx.query(`INSERT INTO user_phone_numbers (phone_number, user_id, is_primary) SELECT p, u, true FROM jsonb_to_recordset($1::jsonb) AS x(p text, u uuid)`, [
          JSON.stringify(phones.map((u) => ({ p: u.phone, u: u.id }))),
        ]);
      }
    });
  }
  const elapsed = performance.now() - start;
  const result = { users: total, transactions: sizes.requests, usersPerTransaction: sizes.perRequest, ms: elapsed, usersPerSecond: total / (elapsed / 1000), defaultRoles: [...roleIds.values()][0]?.length ?? 0, applications: apps.length };
  log(`    raw insert: ${total} users in ${(elapsed / 1000).toFixed(2)} s: ${result.usersPerSecond.toFixed(0)} users/s`);
  return result;
}

// ---------------------------------------------------------------------------------------------------------------
// 3. First sign-in per hash type

async function measureSignin(app: App, db: Db, sizes: Sizes, accounts: string[], log: (l: string) => void) {
  const hashes = await signinHashes();
  const prefix = `s${Date.now().toString(36)}`;
  const out: { type: string; params: string; rawVerify: ReturnType<typeof stats>; first: ReturnType<typeof stats>; second: ReturnType<typeof stats> }[] = [];
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
        body: { email, tenantId: accounts[i % accounts.length], passwordHash: h.passwordHash, passwordHashType: h.type, ...(h.passwordHashConfig ? { passwordHashConfig: h.passwordHashConfig } : {}), verifyUser: true },
      });
      if (r.status !== 201) throw new Error(`migrate ${h.type}: HTTP ${r.status} ${JSON.stringify(r.body).slice(0, 300)}`);
      emails.push(email);
    }
    // The imported hash's own cost, verified in this process against the stored string.
    const stored = (await db.query<{ password_hash: string }>('SELECT password_hash FROM users WHERE email = $1', [emails[0]])).rows[0].password_hash;
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
      if (r.status !== 200 || !r.body.accessToken) throw new Error(`first sign-in ${h.type}: HTTP ${r.status} ${JSON.stringify(r.body).slice(0, 300)}`);
      first.push(r.ms);
    }
    const after = (await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM users WHERE email = ANY($1::text[]) AND password_hash LIKE '$argon2id$v=19$m=19456,t=2,p=1$%'`, [emails])).rows[0].n;
    if (after !== emails.length) throw new Error(`${h.type}: ${after} of ${emails.length} hashes became argon2id`);
    for (const email of emails) {
      const r = await app.login.request('POST', LOGIN, { body: { email, password: PASSWORD } });
      if (r.status !== 200) throw new Error(`second sign-in ${h.type}: HTTP ${r.status}`);
      second.push(r.ms);
    }
    const row = { type: h.type, params: h.params, rawVerify: stats(raw), first: stats(first), second: stats(second) };
    out.push(row);
    log(`    ${h.type.padEnd(16)} first sign-in p50 ${row.first.p50.toFixed(1).padStart(7)} ms (raw verify ${row.rawVerify.p50.toFixed(1)} ms), second ${row.second.p50.toFixed(1)} ms`);
  }
  return { rows: out, rehash: stats(rehash) };
}

// ---------------------------------------------------------------------------------------------------------------

export async function run(opts: BenchOptions): Promise<AreaResult> {
  const { store, log } = opts;
  const sizes = { ...(opts.quick ? QUICK : FULL), ...(requestsOverride ? { requests: requestsOverride } : {}) };
  const want = (name: string) => !opts.only || opts.only.includes(name);
  const tables: Table[] = [];
  const targets: AreaResult['targets'] = [];
  const data: Record<string, unknown> = { sizes };
  const load: Record<string, number[]> = {};
  data.loadAverage = load;
  const section = (key: string, title: string) => {
    load[key] = loadavg().map((x) => Number(x.toFixed(2)));
    log(`\n[${store}] ${title}  (load average ${load[key].join(' ')})`);
  };

  const bdb = await openBenchDb(store, 'usermig');
  let app: App | undefined;
  try {
    app = await startApp(bdb, bdb.db);
    // One default environment role, so every migrated user gets a role assignment (a realistic setup).
    const role = await app.client.request('POST', '/identity/resources/roles/v1', { body: [{ key: 'bench-member', name: 'Member', isDefault: true, level: 1 }] });
    if (role.status !== 201) throw new Error(`create role: HTTP ${role.status} ${JSON.stringify(role.body).slice(0, 300)}`);
    const accounts = Array.from({ length: sizes.accounts }, (_, i) => `bench-acc-${i}`);
    for (const tenantId of accounts) {
      const r = await app.client.request('POST', '/tenants/resources/tenants/v1', { body: { tenantId, name: `Bench ${tenantId}` } });
      if (r.status !== 201) throw new Error(`create account: HTTP ${r.status} ${JSON.stringify(r.body).slice(0, 300)}`);
    }

    if (want('bulk') || want('accept')) {
      section('bulk', `1. bulk: ${sizes.requests} POST ${M}/local/bulk of ${sizes.perRequest} users, jobs in-process (chunk ${app.ctx.userMigration.chunkSize})`);
      const bulk = await measureBulk(app, bdb.db, sizes, accounts, log);
      data.bulk = bulk;
      section('raw', `   raw insert of the same rows (${sizes.requests} transactions of ${sizes.perRequest} users, multi-row INSERT per table)`);
      const raw = await measureRawInsert(bdb.db, sizes, accounts, log);
      data.rawInsert = raw;
      section('accept', `2. accept: one ${sizes.perRequest}-user request on an idle server`);
      const idle = await measureIdleAccept(app, sizes, accounts, log);
      data.idleAccept = idle;

      tables.push({
        title: `[${store}] bulk user migration: ${bulk.users.toLocaleString('en-US')} users in ${bulk.requests} requests of ${bulk.perRequest}`,
        columns: ['measure', 'value'],
        rows: [
          ['end to end (first POST to last "completed")', `${(bulk.endToEndMs / 1000).toFixed(2)} s`],
          ['users/s end to end', Math.round(bulk.usersPerSecond)],
          ['server span (first createdAt → last completedAt)', `${(bulk.serverSpanMs / 1000).toFixed(2)} s = ${Math.round(bulk.users / (bulk.serverSpanMs / 1000))} users/s`],
          ['raw insert of the same rows: users/s (ceiling)', Math.round(raw.usersPerSecond)],
          ['end to end / raw', `${((bulk.usersPerSecond / raw.usersPerSecond) * 100).toFixed(0)} %`],
          ['submitting all requests', `${(bulk.submitMs / 1000).toFixed(2)} s`],
        ],
        notes: [
          `Half the users carry an imported hash (7 types in turn), 1 in 10 a phone number, 1 in 5 metadata, 1 in 3 verifyUser; ${sizes.accounts} accounts; request body p50 ${Math.round(bulk.requestBytes.p50 / 1024)} KiB.`,
          `Rows: ${JSON.stringify(bulk.rows)} (users, memberships, role assignments, phones); ${raw.defaultRoles} default role(s) and ${raw.applications} default application(s) per user.`,
          'Raw insert: the same rows with one multi-row INSERT (jsonb_to_recordset) per table per 1000 users, in one transaction each, straight on the Db; no HTTP, job, checks or JSON items.',
        ],
      });
      tables.push({
        title: `[${store}] accepting one ${sizes.perRequest}-user request (202)`,
        columns: ['case', 'n', 'p50 ms', 'p99 ms', 'max ms'],
        rows: [
          ['while the import jobs run (the bulk run)', bulk.post.n, ms(bulk.post.p50, 1), ms(bulk.post.p99, 1), ms(bulk.post.max, 1)],
          ['idle server', idle.n, ms(idle.p50, 1), ms(idle.p99, 1), ms(idle.max, 1)],
        ],
      });
      targets.push({ name: store === 'postgres' ? `bulk users/s end to end ≥ ${BULK_TARGET_USERS_PER_S} (PostgreSQL)` : `bulk users/s end to end (target ≥ ${BULK_TARGET_USERS_PER_S} is PostgreSQL's)`, target: `${BULK_TARGET_USERS_PER_S}/s`, measured: `${Math.round(bulk.usersPerSecond)}/s (raw ${Math.round(raw.usersPerSecond)}/s)`, met: bulk.usersPerSecond >= BULK_TARGET_USERS_PER_S });
      const worst = Math.max(bulk.post.max, idle.max);
      targets.push({ name: `1000-user request accepted < ${ACCEPT_TARGET_MS} ms (max)`, target: `${ACCEPT_TARGET_MS} ms`, measured: `max ${worst.toFixed(1)} ms (p50 ${bulk.post.p50.toFixed(1)} loaded, ${idle.p50.toFixed(1)} idle)`, met: worst < ACCEPT_TARGET_MS });
    }

    if (want('signin')) {
      section('signin', `3. first sign-in of imported users, ${sizes.signinUsers} per hash type`);
      const si = await measureSignin(app, bdb.db, sizes, accounts, log);
      data.signin = si;
      tables.push({
        title: `[${store}] first sign-in of an imported user (POST ${LOGIN}), ${sizes.signinUsers} users per type, sequential`,
        columns: ['hash type', 'parameters', 'raw verify p50 ms', 'first sign-in p50 ms', 'p90 ms', 'second sign-in p50 ms'],
        rows: si.rows.map((r) => [r.type, r.params, ms(r.rawVerify.p50, 1), ms(r.first.p50, 1), ms(r.first.p90, 1), ms(r.second.p50, 1)]),
        notes: [
          `First sign-in = verify the imported hash + argon2id rehash (m=19456 t=2 p=1, raw ${si.rehash.p50.toFixed(1)} ms p50 here) written in the sign-in transaction + session and tokens.`,
          'Second sign-in: the same users again, now argon2id (no rehash). Raw verify: the hasher on the stored string, in-process.',
        ],
      });
    }
    return { area: 'migration', store, tables, data, targets };
  } finally {
    await app?.close().catch(() => {});
    await bdb.destroy().catch(() => {});
  }
}
