import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { PASSWORD, account, signedIn, user } from '../fixtures/builders.ts';
import { type Fleet, fleetUnavailable, startFleet } from '../helpers/fleet.ts';
import { failures, mixedLoad, webhookReceiver } from '../helpers/fleet-load.ts';
import { waitFor } from '../helpers/processes.ts';

/**
 * Two real server processes on one PostgreSQL database behind HAProxy; instances are killed with SIGKILL mid-work.
 * The tests run in order on one fleet (starting processes is the slow part); each leaves what the next expects.
 */

const LEASE_MS = 3000;
const SIGN_IN = '/identity/resources/auth/v1/user';
const BULK = '/identity/resources/migrations/v1/local/bulk';
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const report = (line: string) => console.log(`  [fleet] ${line}`);

describe('a fleet of two instances on one PostgreSQL behind HAProxy', { skip: fleetUnavailable }, () => {
  let f: Fleet;
  let vendor: string;
  let chainedBefore = 0;
  before(async () => {
    const t0 = Date.now();
    f = await startFleet({
      env: {
        JOB_POLL_MS: '100',
        JOB_LEASE_MS: String(LEASE_MS),
        USER_MIGRATION_CHUNK_SIZE: '25',
        WEBHOOK_POLL_MS: '100',
        WEBHOOK_TIMEOUT_MS: '3000',
        WEBHOOK_BACKOFF_BASE_MS: '200',
        WEBHOOK_BACKOFF_MAX_MS: '1000',
        // Two failed checks at 200 ms take a draining instance out of the balancer.
        DRAIN_DELAY_MS: '1000',
        LOGIN_RATE_LIMIT_PER_IDENTIFIER: '4',
        LOGIN_RATE_LIMIT_PER_IP: '1000',
        LOGIN_RATE_LIMIT_PER_IP_IDENTIFIER: '1000',
      },
    });
    vendor = await f.lb.vendorToken();
    report(`two instances and HAProxy up in ${Date.now() - t0} ms`);
  });
  after(async () => f?.close());

  test('a token issued by one instance verifies on the other', async () => {
    const [a, b] = f.instances;
    const acc = await account(f.lb);
    const u = await user(f.lb, acc);
    const session = await signedIn(a, u);
    const me = await b.call('GET', '/identity/resources/users/v2/me', { token: session.accessToken });
    assert.equal(me.status, 200, JSON.stringify(me.body));
    assert.equal(me.body.id, u.id);
    const vendorOfB = await b.vendorToken();
    const read = await a.call('GET', `/tenants/resources/tenants/v2/${acc.id}`, { token: vendorOfB });
    assert.equal(read.status, 200, 'a vendor token of B verifies on A');
  });

  test('a revocation and a setting change through one instance are enforced by the other within 1 s', async () => {
    const [a, b] = f.instances;
    const poll = async (probe: () => Promise<boolean>, what: string) => {
      const t0 = Date.now();
      while (!(await probe())) {
        assert.ok(Date.now() - t0 < 1000, `${what}: not enforced by the other instance within 1 s`);
        await new Promise((r) => setTimeout(r, 20));
      }
      report(`${what}: enforced by the other instance after ${Date.now() - t0} ms`);
    };
    const c = await a.call('POST', '/auth/vendor/credentials', { token: vendor, body: { description: 'fleet' } });
    assert.equal(c.status, 201, JSON.stringify(c.body));
    const ex = await b.call('POST', '/auth/vendor', { body: { clientId: c.body.clientId, secret: c.body.secret } });
    assert.equal(ex.status, 200, JSON.stringify(ex.body));
    const use = () => b.call('GET', '/auth/vendor/credentials', { token: ex.body.token });
    assert.equal((await use()).status, 200, 'the credential works on B (and B caches its state)');
    assert.equal((await a.call('DELETE', `/auth/vendor/credentials/${c.body.id}`, { token: vendor })).status, 204);
    await poll(async () => (await use()).status === 401, 'credential revoked on A');

    const branding = async () => (await b.call('GET', '/identity/resources/configurations/v1/branding')).body.name;
    const before = await branding();
    const put = await a.call('PUT', '/identity/resources/configurations/v1/branding', {
      token: vendor,
      body: { name: `Fleet ${Date.now()}` },
    });
    assert.equal(put.status, 200, JSON.stringify(put.body));
    await poll(async () => (await branding()) !== before, 'branding changed on A');
  });

  test('failed sign-ins spread over both instances lock and limit at the configured count, not twice it', async () => {
    const [a, b] = f.instances;
    const acc = await account(f.lb);
    const lp = await f.lb.call('POST', '/identity/resources/configurations/v1/lockout-policy', {
      token: vendor,
      headers: { 'gatehouse-tenant-id': acc.id },
      body: { enabled: true, maxAttempts: 3 },
    });
    assert.equal(lp.status, 201, JSON.stringify(lp.body));
    const u = await user(f.lb, acc);
    const wrong = [a, b, a].map(
      (api, i) => () => api.call('POST', SIGN_IN, { body: { email: u.email, password: `w${i}` } }),
    );
    const statuses = [];
    for (const attempt of wrong) statuses.push((await attempt()).status);
    assert.deepEqual(statuses, [401, 401, 401]);
    for (const api of [b, a]) {
      const r = await api.call('POST', SIGN_IN, { body: { email: u.email, password: PASSWORD } });
      assert.equal(r.status, 403, `locked after the 3rd failure on every instance: ${JSON.stringify(r.body)}`);
      assert.equal(r.body.errorCode, 'GH-43005');
    }
    const { rows } = await f.db.query('SELECT failed_attempts, is_locked FROM users WHERE id = $1', [u.id]);
    assert.deepEqual(rows[0], { failed_attempts: 3, is_locked: true });

    // The per-identifier limit (4 in this fleet), on a user the lockout policy does not reach (another account).
    const free = await user(f.lb, await account(f.lb));
    const limited = [];
    for (let i = 0; i < 5; i++) {
      const api = i % 2 ? b : a;
      limited.push((await api.call('POST', SIGN_IN, { body: { email: free.email, password: `w${i}` } })).status);
    }
    assert.deepEqual(limited, [401, 401, 401, 401, 429]);
  });

  test('the audit chain is intact after concurrent writes through both instances', async () => {
    const writes = Array.from(
      { length: 40 },
      (_, i) => () =>
        f.instances[i % 2].call('POST', '/tenants/resources/tenants/v1', {
          token: vendor,
          body: { tenantId: `audit-${i}`, name: `audit ${i}` },
        }),
    );
    const statuses: number[] = [];
    for (let i = 0; i < writes.length; i += 8)
      statuses.push(...(await Promise.all(writes.slice(i, i + 8).map((w) => w()))).map((r) => r.status));
    assert.deepEqual(new Set(statuses), new Set([201]));
    for (const api of f.instances) {
      const v = await api.call('GET', '/audits/verify', { token: await api.vendorToken() });
      assert.equal(v.status, 200);
      assert.equal(v.body.intact, true, JSON.stringify(v.body));
      assert.ok(v.body.checked >= 40, JSON.stringify(v.body));
      chainedBefore = v.body.checked;
    }
  });

  test('mixed load through HAProxy: kill -9 of one instance and its restart lose no acknowledged write', async () => {
    const load = mixedLoad(f.lb, vendor, 'load', 6);
    await sleep(2000);
    const killedAt = Date.now();
    await f.kill(0);
    await sleep(2500);
    const stopLoad = async (err: unknown) => {
      await load.stop();
      throw err;
    };
    const restartMs = await f.restart(0).catch(stopLoad);
    const restartedAt = Date.now();
    await sleep(2000);
    const outcomes = await load.stop();

    const afterKill = failures(outcomes, killedAt, restartedAt);
    const afterRestart = failures(outcomes, restartedAt);
    const acked = outcomes.filter((o) => o.kind === 'create' && o.status === 201).map((o) => o.id);
    const servedAfterKill = outcomes.filter((o) => o.start > killedAt + 2000 && o.start < restartedAt);
    report(
      `mixed load: ${outcomes.length} requests, ${acked.length} accounts acknowledged; after kill -9: ` +
        `${afterKill.failed.length} failed (${afterKill.failed.map((o) => o.status).join(',') || 'none'}) within ` +
        `${afterKill.spanMs} ms; restart took ${restartMs} ms; after restart: ${afterRestart.failed.length} failed`,
    );
    for (const o of afterKill.failed)
      report(`  ${o.kind} ${o.status} at +${o.start - killedAt}..+${o.end - killedAt} ms: ${o.detail}`);
    assert.ok(acked.length > 20, 'the load ran');
    assert.ok(
      afterKill.spanMs < 5000,
      `errors stopped ${afterKill.spanMs} ms after the kill (health check, redispatch)`,
    );
    assert.ok(
      afterKill.failed.length <= 12,
      `at most the requests in flight at the kill failed: ${afterKill.failed.length}`,
    );
    assert.ok(servedAfterKill.length > 0 && servedAfterKill.every((o) => o.status < 500 && o.status > 0));
    assert.equal(afterRestart.failed.length, 0, 'the restarted instance joins without errors');
    const { rows } = await f.db.query('SELECT count(*)::int AS n FROM tenants WHERE tenant_id = ANY($1)', [acked]);
    assert.equal(rows[0].n, acked.length, 'every acknowledged account is stored');
    const audited = await f.db.query(
      `SELECT count(DISTINCT tenant_id)::int AS n FROM (SELECT tenant_id FROM audit_log UNION ALL SELECT tenant_id FROM audit_staging) x WHERE tenant_id = ANY($1)`,
      [acked],
    );
    assert.equal(audited.rows[0].n, acked.length, 'every acknowledged write has its audit entry');
  });

  test('webhook deliveries are at least once: the instance delivering is killed, the other delivers', async () => {
    const hook = await webhookReceiver();
    try {
      const h = await f.lb.call('POST', '/webhook/custom', {
        token: vendor,
        body: { displayName: 'fleet', url: hook.url, eventKeys: ['account.created'] },
      });
      assert.equal(h.status, 201, JSON.stringify(h.body));
      for (let i = 0; i < 24; i++) await account(f.lb, { id: `wh-${i}` });
      const { rows: events } = await f.db.query<{ id: string }>(
        `SELECT id FROM events WHERE event_key = 'account.created' AND tenant_id LIKE 'wh-%'`,
      );
      assert.equal(events.length, 24);
      await waitFor(
        async () => hook.held() >= 12,
        15_000,
        () => `held ${hook.held()}`,
      );
      const killedAt = Date.now();
      await f.kill(0);
      await waitFor(
        async () => hook.cut.size > 0,
        5_000,
        () => 'no delivery was cut by the kill',
      );
      const cut = hook.cut.size;
      hook.release();
      const ids = events.map((e) => e.id);
      const settle = await waitFor(
        async () => ids.every((id) => hook.answered.has(id)),
        90_000,
        () => {
          return `missing ${ids.filter((id) => !hook.answered.has(id)).length} of ${ids.length}`;
        },
      );
      const resumed = Math.max(...[...hook.cut].map((id) => hook.answered.get(id)!)) - killedAt;
      report(
        `webhooks: ${cut} deliveries cut by kill -9, all 24 events answered ${settle} ms after the kill; ` +
          `the cut ones redelivered by the other instance ${resumed} ms after it (lease = timeout + 30 s)`,
      );
      await waitFor(
        async () => {
          const r = await f.db.query<{ n: number }>(
            `SELECT count(*)::int AS n FROM webhook_deliveries WHERE webhook_id = $1 AND status <> 'succeeded'`,
            [h.body.id],
          );
          return r.rows[0].n === 0;
        },
        10_000,
        () => 'deliveries not all succeeded',
      );
      assert.ok([...hook.arrivals.values()].every((n) => n >= 1));
    } finally {
      hook.release();
      await hook.close();
    }
    report(`instance 0 restarted in ${await f.restart(0)} ms`);
  });

  test('kill -9 in the middle of a bulk user migration: the other instance resumes it; each user imported once', async () => {
    const acc = await account(f.lb);
    const ids: string[] = [];
    for (let j = 0; j < 3; j++) {
      const users = Array.from({ length: 1000 }, (_, k) => ({ email: `m${j}-${k}@bulk.fleet`, tenantId: acc.id }));
      const r = await f.lb.call('POST', BULK, { token: vendor, body: { users } });
      assert.equal(r.status, 202, JSON.stringify(r.body));
      ids.push(r.body.migrationId);
    }
    type Row = { id: string; cursor: number; total: number; state: string; locked_by: string; attempts: number };
    const progress = async () =>
      (
        await f.db.query<Row>(
          `SELECT m.id, m.cursor, m.total, m.state, j.locked_by, j.attempts FROM migrations m
           JOIN jobs j ON j.payload->>'migrationId' = m.id::text WHERE m.id = ANY($1::uuid[])`,
          [ids],
        )
      ).rows;
    // Both instances busy with a job each, part-way through.
    await waitFor(
      async () => (await progress()).filter((r) => r.cursor > 0 && r.cursor < r.total).length >= 2,
      60_000,
      () => 'two jobs never ran at once',
    );
    const atKill = await progress();
    const killedAt = Date.now();
    await f.kill(1);
    let takenOver: number | undefined;
    await waitFor(
      async () => {
        const now = await progress();
        const moved = now.some((r) => {
          const was = atKill.find((x) => x.id === r.id)!;
          return was.state === 'running' && was.cursor < was.total && r.locked_by !== was.locked_by;
        });
        if (moved && takenOver === undefined) takenOver = Date.now() - killedAt;
        return now.every((r) => r.state === 'completed');
      },
      120_000,
      () => JSON.stringify(atKill),
    );
    const done = Date.now() - killedAt;
    report(
      `bulk: 3 x 1000 users; a job taken over ${takenOver} ms after kill -9 (lease ${LEASE_MS} ms); done ${done} ms after`,
    );
    assert.ok(takenOver !== undefined, 'a job held by the killed instance was taken over');
    for (const id of ids) {
      const s = await f.lb.call('GET', `${BULK}/status/${id}`, { token: vendor });
      assert.equal(s.status, 200);
      assert.equal(s.body.state, 'completed');
      assert.equal(s.body.succeeded, 1000, JSON.stringify(s.body).slice(0, 500));
      assert.equal(s.body.failed, 0, 'no user met a duplicate (a chunk replayed after the kill would)');
    }
    const { rows } = await f.db.query(
      `SELECT count(*)::int AS users, count(DISTINCT lower(email))::int AS emails,
              (SELECT count(*)::int FROM events WHERE event_key = 'user.created' AND data->>'email' LIKE '%@bulk.fleet') AS created
       FROM users WHERE email LIKE '%@bulk.fleet'`,
    );
    assert.deepEqual(rows[0], { users: 3000, emails: 3000, created: 3000 });
  });

  test('graceful stop under load: SIGTERM drains through /ready and DRAIN_DELAY_MS, no request fails', async () => {
    report(`instance 1 restarted in ${await f.restart(1)} ms`);
    const load = mixedLoad(f.lb, vendor, 'drain', 6);
    await sleep(1500);
    const t0 = Date.now();
    const code = await f.kill(0, 'SIGTERM').catch(async (err) => {
      await load.stop();
      throw err;
    });
    const stopMs = Date.now() - t0;
    await sleep(1000);
    const outcomes = await load.stop();
    const { failed } = failures(outcomes, 0);
    for (const o of failed) report(`  ${o.kind} ${o.status} at +${o.start - t0} ms: ${o.detail}`);
    report(`drain: ${outcomes.length} requests, instance 0 exited ${code} after ${stopMs} ms, ${failed.length} failed`);
    assert.equal(code, 0);
    assert.equal(failed.length, 0, 'a graceful stop loses no request');
    assert.ok(
      outcomes.some((o) => o.start > t0 + stopMs && o.status === 201),
      'the other instance kept serving',
    );
  });

  test('the audit chain is intact after everything, through the balancer', async () => {
    const v = await f.lb.call('GET', '/audits/verify', { token: vendor });
    assert.equal(v.status, 200);
    assert.equal(v.body.intact, true, JSON.stringify(v.body));
    assert.ok(v.body.checked > chainedBefore, JSON.stringify(v.body));
    report(`audit chain intact: ${v.body.checked} entries checked`);
  });
});
