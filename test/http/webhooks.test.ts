import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { startTestApp, type TestApp } from '../helpers/harness.ts';
import { account, signedIn, user } from '../fixtures/builders.ts';
import { openTestDb } from '../helpers/db.ts';

interface Received {
  headers: IncomingHttpHeaders;
  raw: string;
  body: any;
}

/** A local webhook receiver: records every POST; `failNext(n)` answers 500 to the next n requests; `hang` never answers. */
async function receiver(opts: { hang?: boolean } = {}) {
  const got: Received[] = [];
  const sockets = new Set<Socket>();
  let failures = 0;
  const open: ServerResponse[] = [];
  const server: Server = createServer((req, res) => {
    let raw = '';
    req.on('data', (c) => (raw += c));
    req.on('end', () => {
      if (opts.hang) return void open.push(res);
      if (failures > 0) {
        failures--;
        res.writeHead(500, { 'content-type': 'text/plain' }).end('receiver down');
        return;
      }
      got.push({ headers: req.headers, raw, body: JSON.parse(raw) });
      res.writeHead(200, { 'content-type': 'text/plain' }).end('ok');
    });
  });
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`,
    got,
    open,
    failNext(n: number) {
      failures = n;
    },
    /** Waits (polling) until `pred` holds; fails with what arrived after `limitMs`. */
    async until(pred: (got: Received[]) => boolean, what: string, limitMs = 15000) {
      const start = Date.now();
      while (!pred(got)) {
        if (Date.now() - start > limitMs)
          assert.fail(`receiver never got ${what}; got ${JSON.stringify(got.map((g) => g.body.eventKey))}`);
        await new Promise((r) => setTimeout(r, 20));
      }
    },
    async close() {
      for (const s of sockets) s.destroy();
      await new Promise((r) => server.close(r));
    },
  };
}

function verifySignature(r: Received, secret: string): void {
  const ts = r.headers['gatehouse-webhook-timestamp'] as string;
  assert.match(ts, /^\d+$/);
  assert.ok(Math.abs(Number(ts) - Date.now() / 1000) < 600, 'timestamp is in seconds, now');
  const expected = `v1=${createHmac('sha256', secret).update(`${ts}.${r.raw}`).digest('hex')}`;
  assert.equal(r.headers['gatehouse-signature'], expected, 'HMAC-SHA256(secret, timestamp.body)');
  assert.equal(r.headers['gatehouse-webhook-id'], r.body.id);
  assert.equal(r.headers['content-type'], 'application/json');
}

const ENV = {
  WEBHOOK_POLL_MS: '20',
  WEBHOOK_BACKOFF_BASE_MS: '20',
  WEBHOOK_BACKOFF_MAX_MS: '60',
  WEBHOOK_TIMEOUT_MS: '5000',
};
const SECRET = 'whsec-test-0123456789';
const ACCOUNTS = '/tenants/resources/tenants/v1';

let t: TestApp;
let vendor: string;
before(async () => {
  t = await startTestApp(ENV);
  vendor = await t.vendorToken();
});
after(async () => t?.close());

const hook = (body: Record<string, unknown>) => t.call('POST', '/webhook/custom', { token: vendor, body });

describe('webhooks: configuration', () => {
  test('create, list, get, patch, delete; the secret is never echoed; bad input is a 400 naming the field', async () => {
    const r = await hook({
      displayName: 'CRM',
      url: 'https://crm.example/hook',
      secret: SECRET,
      eventKeys: ['user.created'],
      isActive: true,
    });
    assert.equal(r.status, 201, JSON.stringify(r.body));
    assert.deepEqual(Object.keys(r.body).sort(), [
      'createdAt',
      'displayName',
      'eventKeys',
      'id',
      'isActive',
      'tenantId',
      'updatedAt',
      'url',
    ]);
    assert.equal(r.body.tenantId, null);
    const generated = await hook({ displayName: 'gen', url: 'https://gen.example/hook', eventKeys: ['*'] });
    assert.equal(generated.status, 201);
    assert.ok(generated.body.secret.length >= 32, 'a generated secret is shown once');
    assert.equal((await t.call('GET', `/webhook/${generated.body.id}`, { token: vendor })).body.secret, undefined);
    const list = await t.call('GET', '/webhook', { token: vendor });
    assert.ok(list.body.some((w: any) => w.id === r.body.id));
    const p = await t.call('PATCH', `/webhook/${r.body.id}`, {
      token: vendor,
      body: { isActive: false, eventKeys: ['user.created', 'user.deleted'] },
    });
    assert.equal(p.status, 200);
    assert.equal(p.body.isActive, false);
    assert.deepEqual(p.body.eventKeys, ['user.created', 'user.deleted']);
    assert.ok(
      !JSON.stringify(await t.db.query('SELECT secret_sealed FROM webhooks')).includes(SECRET),
      'the secret is sealed at rest',
    );

    const bad = await hook({ displayName: 'x', url: 'ftp://x', eventKeys: ['user.created'] });
    assert.equal(bad.status, 400);
    assert.match(bad.body.errors[0], /url/);
    const badKey = await hook({ displayName: 'x', url: 'https://x.example', eventKeys: ['user.exploded'] });
    assert.equal(badKey.status, 400);
    assert.match(badKey.body.errors[0], /eventKeys/);
    assert.equal(
      (
        await hook({
          displayName: 'x',
          url: 'https://x.example',
          eventKeys: ['user.created'],
          tenantId: 'no-such-account',
        })
      ).status,
      404,
    );
    assert.equal((await t.call('PATCH', `/webhook/${r.body.id}`, { token: vendor, body: {} })).status, 400);

    for (const id of [r.body.id, generated.body.id])
      assert.equal((await t.call('DELETE', `/webhook/${id}`, { token: vendor })).status, 204);
    const gone = await t.call('GET', `/webhook/${r.body.id}`, { token: vendor });
    assert.equal(gone.status, 404);
    assert.equal(gone.body.errorCode, 'GH-67001');
    assert.equal((await t.call('GET', '/webhook/not-a-uuid', { token: vendor })).status, 404);
  });

  test('webhook routes are environment-only: a user token is a 403, none a 401', async () => {
    const user = await t.userToken({ tenantId: 'x', permissions: ['*'] });
    assert.equal((await t.call('GET', '/webhook', { token: user })).status, 403);
    assert.equal((await t.call('GET', '/webhook')).status, 401);
  });
});

describe('webhooks: delivery', () => {
  test('a delivery is signed and carries {id, eventKey, createdAt, tenantId, data}; an account webhook sees only its account', async () => {
    const rx = await receiver();
    const own = await receiver();
    try {
      await account(t, { id: 'wh-own', name: 'Own' });
      const all = await hook({
        displayName: 'all',
        url: rx.url,
        secret: SECRET,
        eventKeys: ['account.created', 'account.updated'],
      });
      const mine = await hook({
        displayName: 'own',
        url: own.url,
        secret: SECRET,
        eventKeys: ['account.updated'],
        tenantId: 'wh-own',
      });
      assert.equal(mine.status, 201);
      await account(t, { id: 'wh-one', name: 'One' });
      assert.equal((await t.call('PUT', `${ACCOUNTS}/wh-one`, { token: vendor, body: { name: 'One!' } })).status, 200);
      assert.equal((await t.call('PUT', `${ACCOUNTS}/wh-own`, { token: vendor, body: { name: 'Own!' } })).status, 200);
      await rx.until((g) => g.length >= 3, 'three events');
      await own.until((g) => g.length >= 1, 'the own account event');
      // Deliveries of different entities run in parallel: find the event rather than rely on arrival order.
      const created = rx.got.find((g) => g.body.eventKey === 'account.created')!;
      verifySignature(created, SECRET);
      assert.deepEqual(Object.keys(created.body), ['id', 'eventKey', 'createdAt', 'tenantId', 'data']);
      assert.equal(created.body.eventKey, 'account.created');
      assert.equal(created.body.tenantId, 'wh-one');
      assert.equal(created.body.data.name, 'One');
      assert.match(created.body.createdAt, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
      // Order is kept per entity (deliveries for different entities run in parallel).
      assert.deepEqual(
        rx.got.filter((g) => g.body.tenantId === 'wh-one').map((g) => g.body.eventKey),
        ['account.created', 'account.updated'],
      );
      assert.deepEqual(rx.got.map((g) => `${g.body.eventKey} ${g.body.tenantId}`).sort(), [
        'account.created wh-one',
        'account.updated wh-one',
        'account.updated wh-own',
      ]);
      assert.deepEqual(
        own.got.map((g) => `${g.body.eventKey} ${g.body.tenantId}`),
        ['account.updated wh-own'],
      );
      verifySignature(own.got[0], SECRET);
      const logs = await t.call('GET', `/webhook/${all.body.id}/logs`, { token: vendor });
      assert.equal(logs.status, 200);
      assert.equal(logs.body.total, 3);
      assert.ok(
        logs.body.data.every(
          (d: any) =>
            d.status === 'succeeded' && d.attempts === 1 && d.responseStatus === 200 && d.responseBody === 'ok',
        ),
      );
      for (const h of [all, mine]) await t.call('DELETE', `/webhook/${h.body.id}`, { token: vendor });
    } finally {
      await rx.close();
      await own.close();
    }
  });

  test('a receiver that fails three times then recovers gets every event, once each, in order per entity', async () => {
    const rx = await receiver();
    try {
      const h = await hook({
        displayName: 'flaky',
        url: rx.url,
        secret: SECRET,
        eventKeys: ['account.created', 'account.updated'],
      });
      rx.failNext(3);
      await account(t, { id: 'wh-flaky', name: 'v0' });
      for (let i = 1; i <= 4; i++)
        assert.equal(
          (await t.call('PUT', `${ACCOUNTS}/wh-flaky`, { token: vendor, body: { name: `v${i}` } })).status,
          200,
        );
      await rx.until((g) => g.length >= 5, 'five events');
      assert.deepEqual(
        rx.got.map((g) => g.body.data.name),
        ['v0', 'v1', 'v2', 'v3', 'v4'],
        'in order, none twice',
      );
      assert.equal(new Set(rx.got.map((g) => g.body.id)).size, 5);
      const logs = await t.call('GET', `/webhook/${h.body.id}/logs`, { token: vendor });
      const first = logs.body.data.find((d: any) => d.eventKey === 'account.created');
      assert.equal(first.status, 'succeeded');
      assert.equal(first.attempts, 4, 'three failures, then success');
      assert.equal(first.responseStatus, 200);
      await t.call('DELETE', `/webhook/${h.body.id}`, { token: vendor });
    } finally {
      await rx.close();
    }
  });

  test('a dead endpoint does not hold up a live one; attempts that keep failing end as failed after the retry window', async () => {
    const dead = await receiver({ hang: true });
    const live = await receiver();
    try {
      const d = await hook({ displayName: 'dead', url: dead.url, secret: SECRET, eventKeys: ['account.created'] });
      const l = await hook({ displayName: 'live', url: live.url, secret: SECRET, eventKeys: ['account.created'] });
      for (const id of ['wh-d1', 'wh-d2', 'wh-d3']) await account(t, { id });
      await live.until((g) => g.length >= 3, "the live endpoint's three events");
      assert.ok(dead.open.length >= 1, 'the dead endpoint still holds a request open');
      await t.call('DELETE', `/webhook/${d.body.id}`, { token: vendor });
      await t.call('DELETE', `/webhook/${l.body.id}`, { token: vendor });
    } finally {
      await dead.close();
      await live.close();
    }
  });

  test('test route sends a signed webhook.test and answers the outcome; replay resends the same event', async () => {
    const rx = await receiver();
    try {
      const h = await hook({ displayName: 'tst', url: rx.url, secret: SECRET, eventKeys: ['account.deleted'] });
      const r = await t.call('POST', `/webhook/${h.body.id}/test`, { token: vendor });
      assert.equal(r.status, 200, JSON.stringify(r.body));
      assert.equal(r.body.status, 'succeeded');
      assert.equal(r.body.responseStatus, 200);
      assert.equal(rx.got.length, 1);
      verifySignature(rx.got[0], SECRET);
      assert.equal(rx.got[0].body.eventKey, 'webhook.test');

      const replay = await t.call('POST', `/webhook/${h.body.id}/logs/${r.body.deliveryId}/replay`, { token: vendor });
      assert.equal(replay.status, 202, JSON.stringify(replay.body));
      assert.equal(replay.body.replayOf, r.body.deliveryId);
      await rx.until((g) => g.length >= 2, 'the replay');
      assert.equal(rx.got[1].body.id, rx.got[0].body.id, 'same event id');
      assert.equal(rx.got[1].raw, rx.got[0].raw, 'same body');
      verifySignature(rx.got[1], SECRET);
      assert.equal(
        (
          await t.call('POST', `/webhook/${h.body.id}/logs/00000000-0000-0000-0000-000000000000/replay`, {
            token: vendor,
          })
        ).body.errorCode,
        'GH-67002',
      );

      await rx.close();
      const down = await t.call('POST', `/webhook/${h.body.id}/test`, { token: vendor });
      assert.equal(down.status, 200);
      assert.equal(down.body.status, 'failed');
      assert.ok(down.body.error);
      await t.call('DELETE', `/webhook/${h.body.id}`, { token: vendor });
    } finally {
      await rx.close().catch(() => {});
    }
  });
});

describe('webhooks: durability', () => {
  test('an event committed before a crash is delivered by the next process over the same database', async () => {
    const db = await openTestDb();
    const rx = await receiver();
    try {
      const first = await startTestApp(ENV, { db, jobs: false });
      const v = await first.vendorToken();
      assert.equal(
        (
          await first.call('POST', '/webhook/custom', {
            token: v,
            body: { displayName: 'd', url: rx.url, secret: SECRET, eventKeys: ['account.created'] },
          })
        ).status,
        201,
      );
      await account(first, { id: 'crash-1', name: 'c' });
      await first.close(); // the process ends before any delivery was attempted
      assert.equal(rx.got.length, 0);
      const second = await startTestApp(ENV, { db });
      try {
        await rx.until((g) => g.length >= 1, 'the event after restart');
        assert.equal(rx.got[0].body.tenantId, 'crash-1');
        verifySignature(rx.got[0], SECRET);
      } finally {
        await second.close();
      }
    } finally {
      await rx.close();
      await db.close();
    }
  });
});

describe('webhooks: events nobody subscribes to', () => {
  test('an event no active webhook would receive is written dispatched; one a webhook wants waits for the fan-out', async () => {
    const app = await startTestApp(ENV, { jobs: false });
    const rx = await receiver();
    try {
      const v = await app.vendorToken();
      const create = (tenantId: string) => account(app, { id: tenantId });
      const written = async (key: string, tenantId: string) =>
        (
          await app.db.query<{ dispatched: boolean }>(
            'SELECT dispatched_at IS NOT NULL AS dispatched FROM events WHERE event_key = $1 AND tenant_id = $2',
            [key, tenantId],
          )
        ).rows.map((r) => r.dispatched);
      const add = async (body: Record<string, unknown>) => {
        const r = await app.call('POST', '/webhook/custom', {
          token: v,
          body: { displayName: 'n', url: rx.url, secret: SECRET, ...body },
        });
        assert.equal(r.status, 201, JSON.stringify(r.body));
        return r.body.id as string;
      };

      await create('nobody-1');
      assert.deepEqual(await written('account.created', 'nobody-1'), [true], 'no webhook at all');
      await create('other-account');
      await create('wanted-1');
      await add({ eventKeys: ['user.created'] });
      await add({ eventKeys: ['account.created', 'account.updated'], isActive: false });
      await add({ eventKeys: ['*'], tenantId: 'other-account' });
      await create('nobody-2');
      assert.deepEqual(
        await written('account.created', 'nobody-2'),
        [true],
        'another key, an inactive webhook, another account',
      );

      const wanted = await add({ eventKeys: ['account.updated'], tenantId: 'wanted-1' });
      const rename = async (tenantId: string) =>
        assert.equal(
          (await app.call('PUT', `${ACCOUNTS}/${tenantId}`, { token: v, body: { name: `${tenantId}!` } })).status,
          200,
        );
      await rename('wanted-1');
      await rename('nobody-2');
      assert.deepEqual(
        await written('account.updated', 'wanted-1'),
        [false],
        'an active webhook of that account and key',
      );
      assert.deepEqual(await written('account.updated', 'nobody-2'), [true]);
      assert.equal(await app.ctx.dispatcher.fanOut(), 1);
      assert.deepEqual(await written('account.updated', 'wanted-1'), [true]);
      assert.equal(await app.ctx.dispatcher.fanOut(), 0, 'nothing left to fan out');
      const { rows } = await app.db.query<{ n: number }>(
        'SELECT count(*)::int AS n FROM webhook_deliveries WHERE webhook_id = $1',
        [wanted],
      );
      assert.equal(rows[0].n, 1, 'the fan-out wrote its delivery');

      // session.revoked is written by the sessions' own statement: the same rule, through a '*' webhook.
      const rev = await user(app, 'nobody-1', { email: 'rev@example.com', password: 'Quiet-Harbor-51!' });
      const login = await signedIn(app, rev);
      assert.equal(
        (
          await app.call('POST', '/identity/resources/auth/v1/logout', {
            token: login.accessToken,
            body: { refreshToken: login.refreshToken },
          })
        ).status < 300,
        true,
      );
      const revoked = await app.db.query<{ dispatched: boolean }>(
        `SELECT dispatched_at IS NOT NULL AS dispatched FROM events WHERE event_key = 'session.revoked'`,
      );
      assert.ok(
        revoked.rows.length >= 1 && revoked.rows.every((r) => r.dispatched),
        'no webhook wants session.revoked yet',
      );
      await add({ eventKeys: ['*'] });
      const again = await signedIn(app, rev);
      await app.call('POST', '/identity/resources/auth/v1/logout', {
        token: again.accessToken,
        body: { refreshToken: again.refreshToken },
      });
      const after = await app.db.query<{ dispatched: boolean }>(
        `SELECT dispatched_at IS NOT NULL AS dispatched FROM events WHERE event_key = 'session.revoked' ORDER BY seq`,
      );
      assert.equal(after.rows.at(-1)?.dispatched, false, "with a '*' webhook it waits for the fan-out");
    } finally {
      await rx.close();
      await app.close();
    }
  });
});

describe('webhooks: retention of the outbox and the delivery log', () => {
  test('removes old finished deliveries and fanned-out events in bounded batches; keeps what is still to be sent until its retry window ends', async () => {
    const good = await receiver();
    const bad = await receiver();
    bad.failNext(1_000_000);
    try {
      for (const id of ['wh-ret-a', 'wh-ret-b']) await account(t, { id });
      await t.ctx.dispatcher.fanOut();
      const g = await hook({ displayName: 'ret-good', url: good.url, secret: SECRET, eventKeys: ['account.created'] });
      const b = await hook({ displayName: 'ret-bad', url: bad.url, secret: SECRET, eventKeys: ['account.created'] });
      await account(t, { id: 'wh-ret', name: 'r' });
      await good.until((x) => x.some((e) => e.body.tenantId === 'wh-ret'), 'the event');
      const eventId = good.got.find((e) => e.body.tenantId === 'wh-ret')!.body.id;
      // The receiver having the event does not mean the dispatcher has recorded the outcome yet: wait for both the
      // good delivery's success and the bad one's first failed attempt to be written.
      for (let i = 0; i < 500; i++) {
        const { rows } = await t.db.query<{ webhook_id: string; attempts: number; status: string }>(
          'SELECT webhook_id, attempts, status FROM webhook_deliveries WHERE webhook_id = ANY($1::uuid[])',
          [[g.body.id, b.body.id]],
        );
        const sent = rows.find((r) => r.webhook_id === g.body.id);
        const failing = rows.find((r) => r.webhook_id === b.body.id);
        if (sent?.status === 'succeeded' && failing && failing.attempts >= 1) break;
        await new Promise((r) => setTimeout(r, 20));
      }
      const count = async (sql: string, params: unknown[] = []) =>
        (await t.db.query<{ n: number }>(sql, params)).rows[0].n;
      const eventsBefore = await count('SELECT count(*)::int AS n FROM events');
      assert.ok(eventsBefore >= 3);
      assert.equal(await t.ctx.webhooks.applyRetention(new Date(), 2), 0, 'nothing is 30 days old yet');

      const later = new Date(Date.now() + 31 * 86_400_000);
      const removed = await t.ctx.webhooks.applyRetention(later, 2);
      assert.ok(removed > 2, 'several batches of 2');
      assert.equal(
        await count('SELECT count(*)::int AS n FROM webhook_deliveries WHERE webhook_id = $1', [g.body.id]),
        0,
        'the succeeded delivery is gone',
      );
      assert.equal(
        await count(
          `SELECT count(*)::int AS n FROM webhook_deliveries WHERE webhook_id = $1 AND status IN ('pending', 'delivering')`,
          [b.body.id],
        ),
        1,
        'the delivery still being retried stays',
      );
      assert.deepEqual(
        (await t.db.query('SELECT id FROM events')).rows.map((r: any) => r.id),
        [eventId],
        'only the event with a delivery still to send stays',
      );

      // Past its retry window, the stuck delivery and its event go too.
      await t.call('PATCH', `/webhook/${b.body.id}`, { token: vendor, body: { isActive: false } });
      await t.db.query(`UPDATE webhook_deliveries SET give_up_at = now() - interval '1 second' WHERE webhook_id = $1`, [
        b.body.id,
      ]);
      assert.equal(await t.ctx.webhooks.applyRetention(later, 2), 2);
      assert.equal(await count('SELECT count(*)::int AS n FROM events'), 0);
      for (const h of [g, b]) await t.call('DELETE', `/webhook/${h.body.id}`, { token: vendor });
    } finally {
      await good.close();
      await bad.close();
    }
  });
});

describe('webhooks: SSRF guard (WEBHOOK_ALLOW_PRIVATE_NETWORKS=false)', () => {
  test('refuses loopback, link-local (metadata), private and non-http URLs, when saved and when delivering', async () => {
    const guarded = await startTestApp({ ...ENV, WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'false' });
    const rx = await receiver();
    try {
      const gv = await guarded.vendorToken();
      const create = (url: string) =>
        guarded.call('POST', '/webhook/custom', {
          token: gv,
          body: { displayName: 'x', url, secret: SECRET, eventKeys: ['account.created'] },
        });
      for (const url of [
        'http://127.0.0.1:9/hook',
        'http://169.254.169.254/latest/meta-data',
        'http://10.1.2.3/h',
        'http://192.168.0.10/h',
        'http://[::1]/h',
        'http://[::ffff:127.0.0.1]/h',
        'http://[fd00:ec2::254]/h',
        'http://localhost:9/hook',
        'http://0.0.0.0/h',
      ]) {
        const r = await create(url);
        assert.equal(r.status, 400, `${url}: ${JSON.stringify(r.body)}`);
        assert.equal(r.body.errorCode, 'GH-67003', url);
        assert.match(r.body.errors[0], /body\.url/);
      }
      assert.equal((await create('file:///etc/passwd')).status, 400);
      assert.equal((await create('gopher://93.184.215.14/')).status, 400);
      const pub = await create('https://93.184.215.14/hook');
      assert.equal(pub.status, 201, 'a public address is allowed');
      const patched = await guarded.call('PATCH', `/webhook/${pub.body.id}`, {
        token: gv,
        body: { url: 'http://169.254.169.254/' },
      });
      assert.equal(patched.status, 400);
      assert.equal(patched.body.errorCode, 'GH-67003');
      assert.equal(
        (await guarded.db.query('SELECT count(*)::int AS n FROM webhooks')).rows[0].n,
        1,
        'a refused URL changes nothing',
      );

      // The name now resolves to loopback (as if its DNS changed after the URL was saved): delivery is refused.
      await guarded.db.query('UPDATE webhooks SET url = $2 WHERE id = $1', [
        pub.body.id,
        rx.url.replace('127.0.0.1', 'localhost'),
      ]);
      await account(guarded, { id: 'ssrf-1', name: 's' });
      let log: any;
      for (let i = 0; i < 500 && !log?.lastError; i++) {
        log = (await guarded.call('GET', `/webhook/${pub.body.id}/logs`, { token: gv })).body.data[0];
        await new Promise((r) => setTimeout(r, 20));
      }
      assert.match(log.lastError, /refused: localhost resolves to (127\.0\.0\.1|::1)/);
      const test = await guarded.call('POST', `/webhook/${pub.body.id}/test`, { token: gv });
      assert.equal(test.body.status, 'failed');
      assert.match(test.body.error, /refused/);
      await guarded.db.query('UPDATE webhooks SET url = $2 WHERE id = $1', [
        pub.body.id,
        'http://169.254.169.254/latest',
      ]);
      const literal = await guarded.call('POST', `/webhook/${pub.body.id}/test`, { token: gv });
      assert.match(literal.body.error, /refused: 169\.254\.169\.254 is a private address/);
      assert.equal(rx.got.length, 0, 'nothing reached the loopback receiver');
    } finally {
      await guarded.close();
      await rx.close();
    }
  });
});
