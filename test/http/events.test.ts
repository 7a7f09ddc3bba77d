import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { readFileSync } from 'node:fs';
import { startTestApp, type TestApp } from '../helpers/harness.ts';
import { PASSWORD, account, user } from '../fixtures/builders.ts';
import { EVENT_KEYS } from '../../src/modules/events/index.ts';

interface Received {
  headers: IncomingHttpHeaders;
  raw: string;
  body: any;
}

const SECRET = 'whsec-events-0123456789';
const A = '/identity/resources/auth/v1';
const E = '/entitlements/resources';

let t: TestApp;
let vendor: string;
let server: Server;
const got: Received[] = [];
let url = '';
let webhookId = '';

before(async () => {
  server = createServer((req, res) => {
    let raw = '';
    req.on('data', (c) => (raw += c));
    req.on('end', () => {
      got.push({ headers: req.headers, raw, body: JSON.parse(raw) });
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/events`;
  t = await startTestApp({ WEBHOOK_POLL_MS: '20', WEBHOOK_BACKOFF_BASE_MS: '20', WEBHOOK_BACKOFF_MAX_MS: '50' });
  vendor = await t.vendorToken();
  const h = await t.call('POST', '/webhook/custom', {
    token: vendor,
    body: { displayName: 'all', url, secret: SECRET, eventKeys: ['*'] },
  });
  assert.equal(h.status, 201);
  webhookId = h.body.id;
});
after(async () => {
  await t?.close();
  await new Promise((r) => server.close(r));
});

/** Waits until every delivery written so far is finished (none pending), then answers what arrived. */
async function settled(): Promise<Received[]> {
  for (let i = 0; i < 750; i++) {
    await t.ctx.dispatcher.fanOut();
    const { rows } = await t.db.query<{ n: number }>(
      `SELECT (SELECT count(*)::int FROM events WHERE dispatched_at IS NULL) + (SELECT count(*)::int FROM webhook_deliveries WHERE status IN ('pending', 'delivering')) AS n`,
    );
    if (rows[0].n === 0) return got;
    await new Promise((r) => setTimeout(r, 20));
  }
  assert.fail('deliveries never settled');
}

const call = (method: string, path: string, body?: unknown, headers?: Record<string, string>) =>
  t.call(method, path, { token: vendor, body, headers });

describe('events: the catalogue', () => {
  test('docs/events.md documents every key of the catalogue with a version', () => {
    const doc = readFileSync(new URL('../../docs/events.md', import.meta.url), 'utf8');
    for (const key of EVENT_KEYS)
      assert.match(
        doc,
        new RegExp(`\\| \`${key.replace('.', '\\.')}\` \\| \\d+ \\|`),
        `${key} is documented with its version`,
      );
  });
});

describe('events: emitted by the modules, delivered once each, signed, in order per entity', () => {
  test('a scripted series of changes produces exactly its events', async () => {
    const start = got.length;
    const ok = (r: { status: number; body: unknown }, status: number) =>
      status < 300
        ? assert.ok(r.status >= 200 && r.status < 300, `${r.status} ${JSON.stringify(r.body)}`)
        : assert.equal(r.status, status, JSON.stringify(r.body));
    await account(t, { id: 'ev-a', name: 'A' });
    await account(t, { id: 'ev-b', name: 'B' });
    ok(await call('PUT', '/tenants/resources/tenants/v1/ev-a', { name: 'A2' }), 200);
    ok(await call('POST', '/tenants/resources/hierarchy/v1', { parentTenantId: 'ev-a', childTenantId: 'ev-b' }), 201);
    const userId = (await user(t, 'ev-a', { email: 'ev@a.test', name: 'Ev' })).id;
    ok(await call('PUT', `/identity/resources/users/v1/${userId}`, { name: 'Eve' }), 200);
    ok(await t.call('POST', `${A}/user`, { body: { email: 'ev@a.test', password: 'wrong password 1' } }), 401);
    const login = await t.call('POST', `${A}/user`, { body: { email: 'ev@a.test', password: PASSWORD } });
    ok(login, 200);
    ok(await t.call('POST', `${A}/logout`, { body: { refreshToken: login.body.refreshToken } }), 200);
    ok(await call('POST', `/identity/resources/users/v1/${userId}/lock`), 200);
    ok(await call('POST', `/identity/resources/users/v1/${userId}/unlock`), 200);
    // The lockout policy (5 failures) locks the user: 5 sign_in_failed, then user.locked in the 5th's transaction.
    for (let i = 0; i < 5; i++)
      ok(await t.call('POST', `${A}/user`, { body: { email: 'ev@a.test', password: `bad ${i}` } }), 401);
    const plan = await call('POST', `${E}/plans/v1`, { name: 'Gold' });
    ok(plan, 200);
    const grant = await call('POST', `${E}/entitlements/v2`, { planId: plan.body.id, tenantId: 'ev-a' });
    ok(grant, 200);
    ok(await call('DELETE', `${E}/entitlements/v2/${grant.body.id}`), 200);
    const mig = await call('POST', '/tenants/resources/migrations/v1/tenants', {
      tenants: [{ tenantId: 'ev-m', name: 'M' }],
    });
    ok(mig, 202);
    for (let i = 0; i < 200; i++) {
      const s = await call('GET', `/tenants/resources/migrations/v1/tenants/status/${mig.body.migrationId}`);
      if (s.body.state === 'completed') break;
      await new Promise((r) => setTimeout(r, 25));
    }
    ok(await call('DELETE', `/identity/resources/users/v1/${userId}`), 200);
    ok(await call('DELETE', '/tenants/resources/tenants/v1/ev-b'), 200);

    const mine = new Set([
      'account.created',
      'account.updated',
      'account.deleted',
      'account.moved',
      'user.created',
      'user.updated',
      'user.deleted',
      'user.signed_in',
      'user.sign_in_failed',
      'user.locked',
      'user.unlocked',
      'session.revoked',
      'migration.completed',
      'entitlement.granted',
      'entitlement.revoked',
    ]);
    const received = (await settled()).slice(start).filter((g) => mine.has(g.body.eventKey));
    const byEntity = (pred: (g: Received) => boolean) => received.filter(pred).map((g) => g.body.eventKey);

    assert.deepEqual(
      byEntity((g) => g.body.data.userId === userId && g.body.eventKey.startsWith('user.')),
      [
        'user.created',
        'user.updated',
        'user.sign_in_failed',
        'user.signed_in',
        'user.locked',
        'user.unlocked',
        'user.sign_in_failed',
        'user.sign_in_failed',
        'user.sign_in_failed',
        'user.sign_in_failed',
        'user.sign_in_failed',
        'user.locked',
        'user.deleted',
      ],
    );
    assert.deepEqual(
      byEntity((g) => g.body.eventKey.startsWith('account.') && g.body.data.tenantId === 'ev-a'),
      ['account.created', 'account.updated'],
    );
    assert.deepEqual(
      byEntity((g) => g.body.eventKey.startsWith('account.') && g.body.data.tenantId === 'ev-b'),
      ['account.created', 'account.moved', 'account.deleted'],
    );
    assert.deepEqual(
      byEntity((g) => g.body.eventKey.startsWith('account.') && g.body.data.tenantId === 'ev-m'),
      ['account.created'],
    );
    assert.deepEqual(
      byEntity((g) => g.body.eventKey === 'session.revoked'),
      ['session.revoked'],
    );
    assert.deepEqual(
      byEntity((g) => g.body.eventKey.startsWith('entitlement.')),
      ['entitlement.granted', 'entitlement.revoked'],
    );
    assert.deepEqual(
      byEntity((g) => g.body.eventKey === 'migration.completed'),
      ['migration.completed'],
    );
    assert.equal(received.length, 13 + 2 + 3 + 1 + 1 + 2 + 1, 'nothing else, nothing twice');
    assert.equal(new Set(received.map((g) => g.body.id)).size, received.length);

    // Payloads: the documented fields, never a secret.
    const moved = received.find((g) => g.body.eventKey === 'account.moved')!.body;
    assert.deepEqual(moved.data, { tenantId: 'ev-b', previousParentTenantId: null, parentTenantId: 'ev-a' });
    assert.equal(moved.tenantId, 'ev-b');
    const signedIn = received.find((g) => g.body.eventKey === 'user.signed_in')!.body.data;
    assert.deepEqual(Object.keys(signedIn).sort(), ['amr', 'email', 'sessionId', 'tenantId', 'userId']);
    const revoked = received.find((g) => g.body.eventKey === 'session.revoked')!.body.data;
    assert.equal(revoked.sessionId, signedIn.sessionId);
    assert.equal(revoked.reason, 'logout');
    assert.equal(received.filter((g) => g.body.eventKey === 'user.locked')[1].body.data.reason, 'lockout');
    assert.deepEqual(received.find((g) => g.body.eventKey === 'migration.completed')!.body.data, {
      migrationId: mig.body.migrationId,
      kind: 'tenants',
      state: 'completed',
      total: 1,
      succeeded: 1,
      failed: 0,
    });
    for (const g of received) {
      assert.ok(
        !g.raw.includes(PASSWORD) &&
          !g.raw.includes(login.body.refreshToken) &&
          !g.raw.includes(login.body.accessToken),
        `${g.body.eventKey} carries no secret`,
      );
      assert.ok(
        !/"[^"]*(password|token|hash|secret|code)[^"]*":/i.test(JSON.stringify(g.body.data)),
        `${g.body.eventKey} has no secret-looking field`,
      );
      const expected = `v1=${createHmac('sha256', SECRET).update(`${g.headers['gatehouse-webhook-timestamp']}.${g.raw}`).digest('hex')}`;
      assert.equal(g.headers['gatehouse-signature'], expected);
    }
    const logs = await call('GET', `/webhook/${webhookId}/logs?limit=200`);
    assert.ok(
      logs.body.data.every((d: any) => d.status === 'succeeded' && d.attempts === 1 && d.responseStatus === 204),
    );
  });

  test('events of a change that rolled back are never sent', async () => {
    const ok = (r: { status: number; body: unknown }, status: number) =>
      status < 300
        ? assert.ok(r.status >= 200 && r.status < 300, `${r.status} ${JSON.stringify(r.body)}`)
        : assert.equal(r.status, status, JSON.stringify(r.body));
    await account(t, { id: 'ev-r', name: 'R' });
    const plan = await call('POST', `${E}/plans/v1`, { name: 'Silver' });
    const before = (await settled()).length;
    // The first grant of the batch is written (and its event emitted) before the second fails: all rolls back.
    ok(
      await call('POST', `${E}/entitlements/v2/batch`, {
        entitlements: [
          { planId: plan.body.id, tenantId: 'ev-r' },
          { planId: plan.body.id, tenantId: 'no-such-account' },
        ],
      }),
      404,
    );
    ok(await call('POST', '/tenants/resources/tenants/v1', { tenantId: 'ev-r', name: 'again' }), 409);
    ok(
      await call('POST', '/identity/resources/users/v1', { email: 'dup@r.test' }, { 'gatehouse-tenant-id': 'ev-r' }),
      201,
    );
    ok(
      await call('POST', '/identity/resources/users/v1', { email: 'dup@r.test' }, { 'gatehouse-tenant-id': 'ev-r' }),
      409,
    );
    const g = await call('POST', `${E}/entitlements/v2`, { planId: plan.body.id, tenantId: 'ev-r' });
    ok(await call('DELETE', `${E}/entitlements/v2/batch?ids=${g.body.id},00000000-0000-0000-0000-000000000000`), 404);
    const after = (await settled()).slice(before).map((x) => x.body.eventKey);
    assert.deepEqual(
      after.filter((k) => k !== 'user.invited' && k !== 'user.activated'),
      ['user.created', 'entitlement.granted'],
      'only the committed changes',
    );
    const { rows } = await t.db.query(
      `SELECT event_key FROM events WHERE event_key LIKE 'entitlement.%' AND tenant_id = 'ev-r'`,
    );
    assert.deepEqual(
      rows.map((r: any) => r.event_key),
      ['entitlement.granted'],
    );
  });
});
