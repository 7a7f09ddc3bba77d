import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { ClosableDb, Db } from '../../src/storage/db.ts';
import { openTestDb } from '../helpers/db.ts';
import { startTestApp, type TestApp } from '../helpers/harness.ts';
import { PASSWORD, account, user } from '../fixtures/builders.ts';

/**
 * Audit durability (runtime contract: no data lost, no silent half-write): an answered write has its
 * entry stored before the answer; entries staged by one process are chained by another; the chain order is the
 * staging order.
 */

const A = '/identity/resources/auth/v1';
const T = '/tenants/resources/tenants/v1';

/**
 * The database as one process sees it, with two switches that simulate failures at the storage boundary:
 * `kill()` — the process is gone: from now on it reaches the database with nothing (every statement throws);
 * `refuse(re)` — statements matching `re` fail (a storage error on that table only).
 */
function processDb(inner: ClosableDb) {
  let dead = false;
  let refused: RegExp | undefined;
  const check = (sql?: string) => {
    if (dead) throw new Error('process killed');
    if (sql && refused?.test(sql)) throw new Error('storage refused the statement');
  };
  const wrap = (q: Db): Db => ({
    async query(sql, params) {
      check(sql);
      return q.query(sql, params);
    },
    transaction(fn) {
      check();
      return q.transaction((tx) => fn(wrap(tx)));
    },
  });
  const db: ClosableDb = { ...wrap(inner), kind: inner.kind, close: async () => {} };
  return { db, kill: () => (dead = true), refuse: (re: RegExp | undefined) => (refused = re) };
}

interface Staged {
  seq: string;
  id: string;
  created_at: Date;
  action: string;
  outcome: string;
  target_id: string | null;
}
const staged = async (db: Db) =>
  (
    await db.query<Staged>(
      'SELECT seq::text AS seq, id, created_at, action, outcome, target_id FROM audit_staging ORDER BY seq',
    )
  ).rows;
const stagedCount = async (db: Db) =>
  Number((await db.query<{ n: number }>('SELECT count(*)::int AS n FROM audit_staging')).rows[0].n);

/** Polls until nothing is staged (the chainer of a running app is expected to get there on its own). */
async function untilChained(db: Db, what: string) {
  for (let i = 0; i < 500; i++) {
    if ((await stagedCount(db)) === 0) return;
    await new Promise((r) => setTimeout(r, 20));
  }
  assert.fail(`${what}: staged entries were not chained`);
}

let inner: ClosableDb;
const apps: TestApp[] = [];
before(async () => {
  inner = await openTestDb();
});
after(async () => {
  for (const a of apps.reverse()) await a.close().catch(() => {});
  await inner?.close();
});

describe('audit durability', () => {
  let stagedBefore: Staged[] = [];
  let userId = '';

  test('an answered write has its entry stored when the answer arrives, even if the process dies right after (chainer not running)', async () => {
    const proc = processDb(inner);
    const a = await startTestApp({}, { db: proc.db, jobs: false });
    apps.push(a);
    const vendor = await a.vendorToken();
    await account(a, { id: 'dur-a', name: 'A' });
    userId = (await user(a, 'dur-a', { email: 'dur@a.test' })).id;
    assert.equal(
      (await a.call('POST', `${A}/user`, { body: { email: 'dur@a.test', password: 'wrong password' } })).status,
      401,
    );
    assert.equal(
      (await a.call('POST', `${A}/user`, { body: { email: 'dur@a.test', password: PASSWORD } })).status,
      200,
    );
    assert.equal((await a.call('PUT', `${T}/dur-a`, { token: vendor, body: { name: 'A2' } })).status, 200);
    // The process "dies" the instant the last answer is in: nothing it would write after its answers arrives.
    proc.kill();

    stagedBefore = await staged(inner);
    assert.deepEqual(
      stagedBefore.map((r) => [r.action, r.outcome, r.target_id]),
      [
        ['vendor.sign_in', 'success', null],
        ['account.created', 'success', 'dur-a'],
        ['user.created', 'success', userId],
        ['user.sign_in', 'failure', userId],
        ['user.sign_in', 'success', userId],
        ['account.updated', 'success', 'dur-a'],
      ],
    );
    const chained = await inner.query('SELECT 1 FROM audit_log WHERE id = ANY($1::uuid[])', [
      stagedBefore.map((r) => r.id),
    ]);
    assert.equal(chained.rows.length, 0, 'nothing chained them: the jobs (and the chainer) are off and no read ran');
  });

  test('another process (jobs on) chains what the dead one staged; verify is intact; order and times are the staging ones', async () => {
    const b = await startTestApp({}, { db: inner });
    apps.push(b);
    await untilChained(inner, "the second app's chainer");
    const vendor = await b.vendorToken();
    const v = await b.call('GET', '/audits/verify', { token: vendor });
    assert.equal(v.status, 200);
    assert.equal(v.body.intact, true, JSON.stringify(v.body));
    const { rows } = await inner.query<{ id: string; created_at: Date }>(
      'SELECT id, created_at FROM audit_log WHERE id = ANY($1::uuid[]) ORDER BY seq',
      [stagedBefore.map((r) => r.id)],
    );
    assert.deepEqual(
      rows.map((r) => r.id),
      stagedBefore.map((r) => r.id),
      'chained once each, in staging order',
    );
    assert.deepEqual(
      rows.map((r) => r.created_at.toISOString()),
      stagedBefore.map((r) => r.created_at.toISOString()),
      "createdAt is the request's time, not the chaining time",
    );
    const list = await b.call('GET', `/audits?tenantId=dur-a&sortDirection=asc`, { token: vendor });
    assert.deepEqual(
      list.body.data.map((e: any) => e.action),
      ['account.created', 'user.created', 'user.sign_in', 'account.updated'],
    );
    await b.close(); // from here on, no chainer runs until the next test starts one
    apps.splice(apps.indexOf(b), 1);
  });

  test("reads see the caller's own writes without a chainer (jobs off): a read chains what was staged before it", async () => {
    const c = await startTestApp({}, { db: inner, jobs: false });
    apps.push(c);
    const vendor = await c.vendorToken();
    await account(c, { id: 'dur-c', name: 'C' });
    assert.deepEqual(
      (await staged(inner)).map((r) => r.target_id),
      [null, 'dur-c'],
      'staged (vendor sign-in, the create), not chained',
    );
    const r = await c.call('GET', '/audits?tenantId=dur-c', { token: vendor });
    assert.equal(r.body.total, 1);
    assert.match(r.body.data[0].hash, /^[0-9a-f]{64}$/);
    const stats = await c.call('GET', '/audits/stats', { token: vendor, headers: { 'gatehouse-tenant-id': 'dur-c' } });
    assert.equal(stats.body.total, 1);
  });

  test('several processes chaining at once keep one chain in staging order', async () => {
    // 40 entries staged (concurrent requests) by an app whose chainer is off, then two apps with small batches
    // (AUDIT_CHAIN_BATCH=3) chain them while more writes arrive through both.
    const a = await startTestApp({}, { db: inner, jobs: false });
    apps.push(a);
    const vendor = await a.vendorToken();
    const created = await Promise.all(
      Array.from({ length: 40 }, (_, i) =>
        a.call('POST', T, { token: vendor, body: { tenantId: `dur-p${i}`, name: `P${i}` } }),
      ),
    );
    assert.ok(created.every((r) => r.status === 201));
    const order = (await staged(inner)).map((r) => r.id);
    assert.ok(order.length >= 40);
    const [b, c] = await Promise.all([
      startTestApp({ AUDIT_CHAIN_BATCH: '3' }, { db: inner }),
      startTestApp({ AUDIT_CHAIN_BATCH: '3' }, { db: inner }),
    ]);
    apps.push(b, c);
    const more = await Promise.all(
      Array.from({ length: 10 }, async (_, i) => {
        const app = i % 2 ? b : c;
        return app.call('POST', T, { token: await app.vendorToken(), body: { tenantId: `dur-q${i}`, name: `Q${i}` } });
      }),
    );
    assert.ok(more.every((r) => r.status === 201));
    await untilChained(inner, 'two chainers');
    const { rows } = await inner.query<{ id: string }>(
      'SELECT id FROM audit_log WHERE id = ANY($1::uuid[]) ORDER BY seq',
      [order],
    );
    assert.deepEqual(
      rows.map((r) => r.id),
      order,
      'the chain order is the staging order',
    );
    const n = Number(
      (await inner.query<{ n: number }>(`SELECT count(*)::int AS n FROM audit_log WHERE target_id LIKE 'dur-q%'`))
        .rows[0].n,
    );
    assert.equal(n, 10);
    const v = await b.call('GET', '/audits/verify', { token: await b.vendorToken() });
    assert.equal(v.body.intact, true, JSON.stringify(v.body));
  });

  test('an entry that cannot be stored turns the answer into 503 GH-67005, never a 2xx', async () => {
    const proc = processDb(inner);
    const a = await startTestApp({}, { db: proc.db, jobs: false });
    apps.push(a);
    const vendor = await a.vendorToken();
    proc.refuse(/audit_staging/);
    const r = await a.call('POST', T, { token: vendor, body: { tenantId: 'dur-x', name: 'X' } });
    assert.equal(r.status, 503, JSON.stringify(r.body));
    assert.equal(r.body.errorCode, 'GH-67005');
    assert.match(r.body.errors[0], /may have been applied/);
    proc.refuse(undefined);
    // The change itself was committed before the answer; the caller is told to check it.
    assert.equal((await a.call('GET', `${T}/dur-x`, { token: vendor })).status, 200);
    const later = await a.call('POST', T, { token: vendor, body: { tenantId: 'dur-y', name: 'Y' } });
    assert.equal(later.status, 201, 'storage back: answers as usual');
  });
});
