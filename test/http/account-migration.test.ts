import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { accountMigrationJobs, TENANTS_MIGRATION_JOB } from '../../src/modules/account-migration/index.ts';
import { startTestApp, type TestApp } from '../helpers/harness.ts';
import { account as createAccount } from '../fixtures/builders.ts';

const MIGRATE = '/tenants/resources/migrations/v1/tenants';
const STATUS = `${MIGRATE}/status`;
const ACCOUNT = '/tenants/resources/tenants/v2';
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

let t: TestApp;
before(async () => {
  // Small chunks so that one batch spans several job steps (duplicates and parents across chunks).
  t = await startTestApp({ JOB_CHUNK_SIZE: '4' });
});
after(async () => t?.close());

async function migrate(app: TestApp, tenants: unknown[]): Promise<string> {
  const r = await app.call('POST', MIGRATE, { token: await app.vendorToken(), body: { tenants } });
  assert.equal(r.status, 202, JSON.stringify(r.body));
  assert.deepEqual(Object.keys(r.body), ['migrationId']);
  assert.match(r.body.migrationId, UUID);
  return r.body.migrationId;
}

async function status(app: TestApp, id: string) {
  const r = await app.call('GET', `${STATUS}/${id}`, { token: await app.vendorToken() });
  assert.equal(r.status, 200, JSON.stringify(r.body));
  return r.body;
}

/** Polls the status until `until` holds (bounded). */
async function waitFor(app: TestApp, id: string, until: (s: any) => boolean, ms = 15_000, every = 10) {
  const deadline = Date.now() + ms;
  for (;;) {
    const s = await status(app, id);
    if (until(s)) return s;
    if (Date.now() > deadline)
      throw new Error(
        `migration ${id} did not get there in ${ms} ms: ${JSON.stringify({ ...s, errors: s.errors.length })}`,
      );
    await sleep(every);
  }
}
const completed = (app: TestApp, id: string) => waitFor(app, id, (s) => s.state === 'completed');

async function account(app: TestApp, tenantId: string) {
  const r = await app.call('GET', `${ACCOUNT}/${encodeURIComponent(tenantId)}`, { token: await app.vendorToken() });
  assert.equal(r.status, 200);
  return r.body;
}

const brief = (errors: any[]) => errors.map((e) => [e.index, e.id, e.code]);

describe('account migration', () => {
  test('a mixed batch: valid ids and objects imported, each bad item one error entry', async () => {
    const vendor = await t.vendorToken();
    await createAccount(t, { id: 'live-1', name: 'Live' });
    const items = [
      /* 0 */ 'mig-a',
      /* 1 */ {
        tenantId: 'mig-b',
        name: 'Bee',
        website: 'https://b.example',
        metadata: { plan: 'pro' },
        isReseller: true,
        unknownField: 'dropped',
      },
      /* 2 */ 'mig-a', // repeats 0 in the same chunk
      /* 3 */ { tenantId: 'mig-b-kid', parentTenantId: 'mig-b' }, // parent earlier in the same chunk
      /* 4 */ 'live-1', // already live
      /* 5 */ '-bad id',
      /* 6 */ { tenantId: 'mig-c', name: 'x'.repeat(256) },
      /* 7 */ { tenantId: 'mig-child', name: 'Child', parentTenantId: 'mig-b', metadata: '{"k":1}' }, // parent in an earlier chunk
      /* 8 */ 'mig-b', // repeats 1, in a later chunk
      /* 9 */ { tenantId: 'mig-orphan', parentTenantId: 'nope' },
      /* 10 */ { name: 'no id' },
      /* 11 */ { tenantId: 'mig-d', parentTenantId: 'mig-later' }, // parent only later in the batch
      /* 12 */ 'mig-later',
      /* 13 */ { tenantId: 'mig-e', metadata: 'not json' },
      /* 14 */ { tenantId: 'mig-self', parentTenantId: 'mig-self' },
      /* 15 */ { tenantId: 'mig-f', parentTenantId: 'live-1', isReseller: 'yes', metadata: 7 },
      /* 16 */ { tenantId: 'mig-c', name: 'Fixed' }, // the first item with an id claims it, even an invalid one
      /* 17 */ { tenantId: 'mig-g', parentTenantId: 'live-1', timezone: 'Europe/Paris' },
    ];
    const id = await migrate(t, items);
    const s = await completed(t, id);

    assert.equal(s.migrationId, id);
    assert.equal(s.total, items.length);
    assert.equal(s.succeeded, 6);
    assert.equal(s.failed, 12);
    assert.match(s.createdAt, ISO);
    assert.match(s.startedAt, ISO);
    assert.match(s.completedAt, ISO);
    assert.ok(s.createdAt <= s.startedAt && s.startedAt <= s.completedAt);
    assert.deepEqual(brief(s.errors), [
      [2, 'mig-a', 'GH-30301'],
      [4, 'live-1', 'GH-30002'],
      [5, '-bad id', 'GH-10001'],
      [6, 'mig-c', 'GH-10001'],
      [8, 'mig-b', 'GH-30301'],
      [9, 'mig-orphan', 'GH-30001'],
      [10, null, 'GH-10001'],
      [11, 'mig-d', 'GH-30001'],
      [13, 'mig-e', 'GH-10001'],
      [14, 'mig-self', 'GH-10001'],
      [15, 'mig-f', 'GH-10001'],
      [16, 'mig-c', 'GH-30301'],
    ]);
    const byIndex = Object.fromEntries(s.errors.map((e: any) => [e.index, e]));
    for (const e of s.errors) assert.deepEqual(Object.keys(e), ['index', 'id', 'code', 'message']);
    assert.match(byIndex[2].message, /tenantId mig-a is given by an earlier item/);
    assert.match(byIndex[4].message, /already exists/);
    assert.match(byIndex[5].message, /^the tenant id must be 1-255 characters/);
    assert.equal(byIndex[6].message, 'name must not have more than 255 characters');
    assert.match(byIndex[9].message, /parentTenantId nope is neither a live account nor/);
    assert.equal(byIndex[10].message, 'tenantId is required');
    assert.match(byIndex[13].message, /^metadata must be a JSON object or a string holding one/);
    assert.equal(byIndex[14].message, 'parentTenantId must differ from tenantId');
    assert.equal(byIndex[15].message, 'isReseller must be boolean; metadata must be object or string');

    const a = await account(t, 'mig-a');
    assert.equal(a.name, 'mig-a', 'name defaults to the tenant id');
    assert.equal(a.parentTenantId, null);
    assert.equal(a.deletedAt, null);
    const b = await account(t, 'mig-b');
    assert.equal(b.name, 'Bee');
    assert.equal(b.website, 'https://b.example');
    assert.equal(b.isReseller, true);
    assert.deepEqual(JSON.parse(b.metadata), { plan: 'pro' });
    assert.equal((await account(t, 'mig-b-kid')).parentTenantId, 'mig-b');
    const child = await account(t, 'mig-child');
    assert.equal(child.parentTenantId, 'mig-b');
    assert.deepEqual(JSON.parse(child.metadata), { k: 1 });
    assert.equal((await account(t, 'mig-later')).name, 'mig-later');
    const g = await account(t, 'mig-g');
    assert.equal(g.parentTenantId, 'live-1');
    assert.equal(g.timezone, 'Europe/Paris');
    assert.equal((await account(t, 'live-1')).name, 'Live', 'a live account is left alone');
    for (const absent of ['mig-c', 'mig-orphan', 'mig-d', 'mig-e', 'mig-self', 'mig-f'])
      assert.deepEqual(await account(t, absent), [], absent);
  });

  test('a removed account is reactivated with the migrated fields only', async () => {
    const vendor = await t.vendorToken();
    const created = await createAccount(t, { id: 'gone-1', name: 'Old', fields: { website: 'https://old.example' } });
    assert.equal((await t.call('DELETE', '/tenants/resources/tenants/v1/gone-1', { token: vendor })).status, 200);
    assert.deepEqual(await account(t, 'gone-1'), []);

    const s = await completed(
      t,
      await migrate(t, [
        { tenantId: 'gone-1', name: 'New' },
        'gone-1-kid',
        { tenantId: 'gone-1-sub', parentTenantId: 'gone-1' },
      ]),
    );
    assert.equal(s.succeeded, 3);
    assert.deepEqual(s.errors, []);
    const a = await account(t, 'gone-1');
    assert.equal(a.name, 'New');
    assert.equal(a.website, null);
    assert.equal(a.deletedAt, null);
    assert.notEqual(a.id, created.body.id);
    assert.equal((await account(t, 'gone-1-sub')).parentTenantId, 'gone-1');
  });

  test('request limits: 1001 items, none, no list, a malformed item, U+0000 or a lone surrogate are a 400 and nothing is stored', async () => {
    const vendor = await t.vendorToken();
    const count = async () =>
      Number((await t.db.query<{ n: number }>('SELECT count(*)::int AS n FROM migrations')).rows[0].n);
    const before = await count();

    const big = await t.call('POST', MIGRATE, {
      token: vendor,
      body: { tenants: Array.from({ length: 1001 }, (_, i) => `big-${i}`) },
    });
    assert.equal(big.status, 400);
    assert.equal(big.body.errorCode, 'GH-10001');
    assert.match(big.body.errors.join(' '), /body\.tenants must NOT have more than 1000 items/);
    const empty = await t.call('POST', MIGRATE, { token: vendor, body: { tenants: [] } });
    assert.equal(empty.status, 400);
    assert.match(empty.body.errors.join(' '), /body\.tenants must NOT have fewer than 1 items/);
    const missing = await t.call('POST', MIGRATE, { token: vendor, body: {} });
    assert.equal(missing.status, 400);
    assert.match(missing.body.errors.join(' '), /body\.tenants is required/);
    const number = await t.call('POST', MIGRATE, { token: vendor, body: { tenants: ['ok-1', 5] } });
    assert.equal(number.status, 400);
    assert.match(number.body.errors.join(' '), /body\.tenants\.1 must be string/);
    const nul = await t.call('POST', MIGRATE, {
      token: vendor,
      body: { tenants: ['ok-1', { tenantId: 'ok-2', name: 'a\u0000b' }] },
    });
    assert.equal(nul.status, 400);
    assert.equal(nul.body.errorCode, 'GH-10001');
    assert.match(nul.body.errors[0], /body\.tenants\.1\.name must not contain the NUL character/); // refused for every route (src/http/input-guard.ts)
    const surrogate = await t.call('POST', MIGRATE, {
      token: vendor,
      raw: '{"tenants":["ok-1",{"tenantId":"ok-2","metadata":{"k":"x\\ud800y"}}]}',
      headers: { 'content-type': 'application/json' },
    });
    assert.equal(surrogate.status, 400);
    assert.match(surrogate.body.errors[0], /tenants\[1\] contains U\+0000 or an unpaired surrogate/);

    await sleep(100);
    assert.equal(await count(), before);
    const { rows } = await t.db.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM tenants WHERE tenant_id LIKE 'big-%' OR tenant_id LIKE 'ok-%'`,
    );
    assert.equal(rows[0].n, 0);
  });

  test('exactly 1000 items are accepted and imported', async () => {
    const items = Array.from({ length: 1000 }, (_, i) =>
      i % 2 ? `thousand-${i}` : { tenantId: `thousand-${i}`, name: `Account ${i}` },
    );
    const s = await completed(t, await migrate(t, items));
    assert.equal(s.succeeded, 1000);
    assert.equal(s.failed, 0);
    const { rows } = await t.db.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM tenants WHERE tenant_id LIKE 'thousand-%' AND deleted_at IS NULL`,
    );
    assert.equal(rows[0].n, 1000);
  });

  test('status: unknown or malformed id is a 404; routes need an environment token', async () => {
    const vendor = await t.vendorToken();
    for (const id of ['7d1c9a3e-0000-4000-8000-000000000000', 'not-a-uuid', "1' OR '1'='1"]) {
      const r = await t.call('GET', `${STATUS}/${encodeURIComponent(id)}`, { token: vendor });
      assert.equal(r.status, 404, id);
      assert.equal(r.body.errorCode, 'GH-30007');
      assert.match(r.body.errors[0], /No account migration with migrationId/);
    }
    assert.equal((await t.call('POST', MIGRATE, { body: { tenants: ['x'] } })).status, 401);
    const user = await t.userToken({ tenantId: 'live-1' });
    assert.equal((await t.call('POST', MIGRATE, { token: user, body: { tenants: ['x'] } })).status, 403);
    assert.equal((await t.call('GET', `${STATUS}/7d1c9a3e-0000-4000-8000-000000000000`, { token: user })).status, 403);
  });
});

describe('account migration job', () => {
  test('pending until a worker runs it; a job that failed for good marks the migration failed', async () => {
    const app = await startTestApp({}, { jobs: false });
    try {
      const id = await migrate(app, ['pend-1', 'pend-2']);
      const s = await status(app, id);
      assert.deepEqual(
        { ...s, createdAt: 'x' },
        {
          migrationId: id,
          state: 'pending',
          total: 2,
          succeeded: 0,
          failed: 0,
          errors: [],
          createdAt: 'x',
          startedAt: null,
          completedAt: null,
        },
      );
      const { rows } = await app.db.query<any>('SELECT * FROM jobs WHERE kind = $1', [TENANTS_MIGRATION_JOB]);
      assert.equal(rows.length, 1);
      assert.deepEqual(rows[0].payload, { migrationId: id });

      await accountMigrationJobs(app.ctx.accountMigration)[TENANTS_MIGRATION_JOB].onFailed!(app.db, rows[0], 'boom');
      const failed = await status(app, id);
      assert.equal(failed.state, 'failed');
      assert.match(failed.completedAt, ISO);
      // A later run of the job leaves a failed migration alone.
      app.ctx.jobs.start();
      for (let i = 0; i < 500; i++) {
        const j = await app.db.query<{ state: string }>('SELECT state FROM jobs WHERE id = $1', [rows[0].id]);
        if (j.rows[0].state === 'completed') break;
        await sleep(10);
      }
      assert.equal(
        (await app.db.query<{ state: string }>('SELECT state FROM jobs WHERE id = $1', [rows[0].id])).rows[0].state,
        'completed',
      );
      assert.equal((await status(app, id)).state, 'failed');
      assert.deepEqual(await account(app, 'pend-1'), []);
    } finally {
      await app.close();
    }
  });

  /** 400 items in chunks of 5: every 50th is invalid and every 50th (another offset) repeats an earlier id. */
  const plain = (i: number) => i % 50 !== 7 && i % 50 !== 23;
  function bigBatch(prefix: string) {
    const items: unknown[] = [];
    const expectedErrors: [number, string, string][] = [];
    const valid: string[] = [];
    for (let i = 0; i < 400; i++) {
      if (!plain(i) && i % 50 === 7) {
        items.push(`-${prefix}-${i}`);
        expectedErrors.push([i, `-${prefix}-${i}`, 'GH-10001']);
      } else if (i % 50 === 23) {
        items.push({ tenantId: `${prefix}-${i - 20}`, name: 'again' });
        expectedErrors.push([i, `${prefix}-${i - 20}`, 'GH-30301']);
      } else {
        // Every third is an object whose parent is the valid item two or three places before (often in the chunk before).
        const parent = [i - 2, i - 3].find((j) => j >= 0 && plain(j));
        items.push(
          i % 3
            ? `${prefix}-${i}`
            : {
                tenantId: `${prefix}-${i}`,
                name: `N ${i}`,
                ...(parent !== undefined ? { parentTenantId: `${prefix}-${parent}` } : {}),
              },
        );
        valid.push(`${prefix}-${i}`);
      }
    }
    return { items, expectedErrors, valid };
  }

  async function countLive(app: TestApp, ids: string[]) {
    const { rows } = await app.db.query<{ n: number; d: number }>(
      'SELECT count(*)::int AS n, count(DISTINCT tenant_id)::int AS d FROM tenants WHERE tenant_id = ANY($1::text[]) AND deleted_at IS NULL',
      [ids],
    );
    return rows[0];
  }

  test('a crash mid-job resumes from the cursor on another server: nothing imported twice, nothing lost', async () => {
    const env = { JOB_CHUNK_SIZE: '5', JOB_LEASE_MS: '300' };
    const first = await startTestApp(env);
    let second: TestApp | undefined;
    try {
      const { items, expectedErrors, valid } = bigBatch('crash');
      const id = await migrate(first, items);
      await waitFor(first, id, (s) => s.state === 'running' && s.succeeded >= 20, 15_000, 2);
      await first.ctx.jobs.crash();

      const partial = await status(first, id);
      assert.equal(partial.state, 'running');
      assert.ok(partial.succeeded >= 20);
      assert.ok(
        partial.succeeded + partial.failed < partial.total,
        `the crash came mid-job (${partial.succeeded + partial.failed} of ${partial.total})`,
      );
      const job = (
        await first.db.query<any>('SELECT state, locked_by, attempts FROM jobs WHERE kind = $1', [
          TENANTS_MIGRATION_JOB,
        ])
      ).rows[0];
      assert.equal(job.state, 'running', 'a crashed worker keeps its lease');
      assert.ok(job.locked_by);
      assert.equal(job.attempts, 1);
      assert.equal((await countLive(first, valid)).n, partial.succeeded);

      second = await startTestApp(env, { db: first.db });
      const done = await completed(second, id);
      assert.equal(done.total, 400);
      assert.equal(done.succeeded + done.failed, done.total);
      assert.equal(done.succeeded, valid.length);
      assert.deepEqual(
        brief(done.errors),
        expectedErrors,
        'each bad item reported once, no item rejected as already imported',
      );
      assert.deepEqual(await countLive(second, valid), { n: valid.length, d: valid.length });
      assert.equal(
        (await second.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM tenants WHERE tenant_id LIKE 'crash-%'`))
          .rows[0].n,
        valid.length,
      );
      const resumed = (
        await second.db.query<any>('SELECT state, attempts FROM jobs WHERE kind = $1', [TENANTS_MIGRATION_JOB])
      ).rows[0];
      assert.deepEqual(resumed, { state: 'completed', attempts: 2 });
      assert.equal(
        (await account(second, 'crash-399')).parentTenantId,
        'crash-397',
        'an object item imported after the resume',
      );
    } finally {
      await second?.close();
      await first.close();
    }
  });

  test('a graceful stop hands the job back; a restart finishes it', async () => {
    const app = await startTestApp({ JOB_CHUNK_SIZE: '5' });
    try {
      const { items, expectedErrors, valid } = bigBatch('stop');
      const id = await migrate(app, items);
      await waitFor(app, id, (s) => s.state === 'running' && s.succeeded >= 20, 15_000, 2);
      await app.ctx.jobs.stop();

      const partial = await status(app, id);
      assert.equal(partial.state, 'running');
      assert.ok(partial.succeeded + partial.failed < partial.total, 'stopped mid-job');
      const job = (
        await app.db.query<any>('SELECT state, locked_by, attempts FROM jobs WHERE kind = $1', [TENANTS_MIGRATION_JOB])
      ).rows[0];
      assert.deepEqual(job, { state: 'pending', locked_by: null, attempts: 0 });

      app.ctx.jobs.start();
      const done = await completed(app, id);
      assert.equal(done.succeeded, valid.length);
      assert.deepEqual(brief(done.errors), expectedErrors);
      assert.deepEqual(await countLive(app, valid), { n: valid.length, d: valid.length });
    } finally {
      await app.close();
    }
  });
});
