import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startTestApp, VENDOR, type TestApp } from '../helpers/harness.ts';
import { account } from '../fixtures/builders.ts';

const PASSWORD = 'correct horse battery staple';
const A = '/identity/resources/auth/v1';
const U = '/identity/resources/users';

let t: TestApp;
let vendor: string;
before(async () => {
  t = await startTestApp();
  vendor = await t.vendorToken();
});
after(async () => t?.close());

/** Entries after `since` (an ISO time), oldest first, as comparable tuples. */
async function entriesSince(since: string, extra = '') {
  const r = await t.call('GET', `/audits?from=${encodeURIComponent(since)}&sortDirection=asc&count=1000${extra}`, {
    token: vendor,
  });
  assert.equal(r.status, 200, JSON.stringify(r.body));
  return r.body as { data: any[]; total: number };
}
const tuple = (e: any) => [
  e.action,
  e.outcome,
  `${e.actor.type}:${e.actor.id}`,
  `${e.target.type}:${e.target.id}`,
  e.tenantId,
];

describe('audit: entries for a scripted series of actions', () => {
  test('every write and every sign-in, with actor, account, target, outcome, IP and user agent; reads are not audited', async () => {
    const since = new Date().toISOString();
    const ua = { 'user-agent': 'audit-test/1.0' };
    assert.equal(
      (
        await t.call('POST', '/tenants/resources/tenants/v1', {
          token: vendor,
          body: { tenantId: 'au-a', name: 'A' },
          headers: ua,
        })
      ).status,
      201,
    );
    const u = await t.call('POST', `${U}/v1`, {
      token: vendor,
      body: { email: 'au@a.test', password: PASSWORD },
      headers: { 'gatehouse-tenant-id': 'au-a', ...ua },
    });
    assert.equal(u.status, 201);
    const userId = u.body.id;
    assert.equal(
      (await t.call('GET', `${U}/v1/${userId}`, { token: vendor, headers: { 'gatehouse-tenant-id': 'au-a' } })).status,
      200,
    );
    assert.equal(
      (await t.call('POST', `${A}/user`, { body: { email: 'au@a.test', password: 'wrong password' }, headers: ua }))
        .status,
      401,
    );
    const login = await t.call('POST', `${A}/user`, { body: { email: 'au@a.test', password: PASSWORD }, headers: ua });
    assert.equal(login.status, 200);
    assert.equal(
      (await t.call('PUT', `${U}/v2/me`, { token: login.body.accessToken, body: { name: 'Au' }, headers: ua })).status,
      200,
    );
    assert.equal(
      (await t.call('POST', '/tenants/resources/tenants/v1', { body: { tenantId: 'au-x', name: 'X' }, headers: ua }))
        .status,
      401,
    );
    assert.equal(
      (
        await t.call('PUT', '/tenants/resources/tenants/v1/au-missing', {
          token: vendor,
          body: { name: 'nope' },
          headers: ua,
        })
      ).status,
      404,
    );
    assert.equal(
      (
        await t.call('DELETE', `${U}/v1/${userId}`, {
          token: vendor,
          headers: { 'gatehouse-tenant-id': 'au-a', ...ua },
        })
      ).status,
      200,
    );

    const { data, total } = await entriesSince(since);
    const vendorActor = `vendor:${VENDOR.clientId}`;
    assert.deepEqual(data.map(tuple), [
      ['account.created', 'success', vendorActor, 'account:au-a', 'au-a'],
      ['user.created', 'success', vendorActor, `user:${userId}`, 'au-a'],
      // A failed sign-in of a known user: that user's, in the user's account (the caller stays anonymous).
      ['user.sign_in', 'failure', 'anonymous:null', `user:${userId}`, 'au-a'],
      ['user.sign_in', 'success', `user:${userId}`, `user:${userId}`, null],
      ['user.updated', 'success', `user:${userId}`, `user:${userId}`, 'au-a'],
      ['account.created', 'failure', 'anonymous:null', 'null:null', null],
      ['account.updated', 'failure', vendorActor, 'account:au-missing', 'au-missing'],
      ['user.deleted', 'success', vendorActor, `user:${userId}`, 'au-a'],
    ]);
    assert.equal(total, 8);
    for (const e of data) {
      assert.equal(e.userAgent, 'audit-test/1.0');
      assert.equal(e.ip, '127.0.0.1');
      assert.match(e.hash, /^[0-9a-f]{64}$/);
    }
    assert.deepEqual(data[2].data, {
      method: 'POST',
      path: `${A}/user`,
      statusCode: 401,
      errorCode: data[2].data.errorCode,
      identifier: 'au@a.test',
      targetDisplay: 'au@a.test',
      actorDisplay: 'anonymous',
      description: `user.sign_in au@a.test by anonymous: failed (${data[2].data.errorCode})`,
    });
    assert.equal(data[1].data.description, `user.created au@a.test by vendor ${VENDOR.clientId}`);
    assert.equal(data[7].data.description, `user.deleted au@a.test by vendor ${VENDOR.clientId}`);
    assert.match(data[2].data.errorCode, /^GH-/);
    assert.equal(data[2].severity, 'Medium');
    assert.equal(data[3].severity, 'Info');
    for (let i = 1; i < data.length; i++)
      assert.equal(data[i].prevHash, data[i - 1].hash, "each entry carries the previous one's hash");
    const all = JSON.stringify(data);
    assert.ok(
      !all.includes(PASSWORD) && !all.includes(login.body.accessToken) && !all.includes(login.body.refreshToken),
      'no secret in any entry',
    );
  });

  test('POST /audits/ adds an entry (202) with secrets dropped; query filters, paging and sorting', async () => {
    const since = new Date().toISOString();
    const r = await t.call('POST', '/audits/', {
      token: vendor,
      headers: { 'gatehouse-tenant-id': 'au-a' },
      body: {
        severity: 'High',
        action: 'billing.export',
        description: 'exported',
        user: 'ops@a.test',
        password: 'hunter2hunter2',
        data: { rows: 3, apiKey: 'k-123', code: '123456', nested: { token: 't-1', ok: true } },
      },
    });
    assert.equal(r.status, 202, JSON.stringify(r.body));
    assert.equal(
      (await t.call('POST', '/audits/', { token: vendor, body: { severity: 'High' } })).status,
      400,
      'the tenant header is required',
    );
    assert.equal(
      (
        await t.call('POST', '/audits/', {
          token: vendor,
          headers: { 'gatehouse-tenant-id': 'au-a' },
          body: { severity: 'Loud' },
        })
      ).status,
      400,
    );
    const { data } = await entriesSince(since);
    assert.equal(data.length, 1, 'the add route records its entry once');
    assert.equal(data[0].action, 'billing.export');
    assert.equal(data[0].severity, 'High');
    assert.equal(data[0].tenantId, 'au-a');
    assert.deepEqual(data[0].data, { description: 'exported', user: 'ops@a.test', rows: 3, nested: { ok: true } });

    const byAction = await t.call('GET', '/audits?action=user.sign_in', { token: vendor });
    assert.equal(byAction.body.total, 2);
    const prefix = await t.call('GET', `/audits?action=${encodeURIComponent('account.*')}`, { token: vendor });
    assert.equal(prefix.body.total, 3);
    const byTenant = await t.call('GET', '/audits?tenantId=au-a&count=2&offset=1&sortBy=createdAt&sortDirection=asc', {
      token: vendor,
    });
    assert.equal(byTenant.body.total, 6);
    assert.equal(byTenant.body.data.length, 2);
    assert.equal(byTenant.body.data[0].action, 'user.created');
    const byActor = await t.call('GET', `/audits?actor=${VENDOR.clientId}&filter=au-missing`, { token: vendor });
    assert.equal(byActor.body.total, 1);
    assert.equal((await t.call('GET', '/audits?to=2000-01-01T00:00:00Z', { token: vendor })).body.total, 0);
    assert.equal((await t.call('GET', '/audits?from=yesterday', { token: vendor })).status, 400);

    const user = await t.userToken({ tenantId: 'au-a', permissions: ['fe.secure.read.audits'] });
    const mine = await t.call('GET', '/audits', { token: user });
    assert.equal(mine.status, 200);
    assert.ok(mine.body.data.every((e: any) => e.tenantId === 'au-a'));
    assert.equal((await t.call('GET', '/audits?tenantId=au-b', { token: user })).status, 403);
    assert.equal((await t.call('GET', '/audits', { token: await t.userToken({ tenantId: 'au-a' }) })).status, 403);

    const stats = await t.call('GET', '/audits/stats', { token: vendor, headers: { 'gatehouse-tenant-id': 'au-a' } });
    assert.equal(stats.status, 200);
    assert.equal(stats.body.total, 6);
    assert.equal(stats.body.bySeverity.High, 1);
    const metrics = await t.call('GET', '/audits/resources/metrics/v1', { token: vendor });
    assert.equal(metrics.status, 200);
    assert.ok(metrics.body.topTenants.data.some((x: any) => x.tenantId === 'au-a'));
  });

  test('export streams every matching entry as CSV or JSON lines', async () => {
    const total = (await t.call('GET', '/audits?count=1', { token: vendor })).body.total;
    const jsonl = await t.app.inject({
      method: 'GET',
      url: '/audits/export?format=jsonl',
      headers: { authorization: `Bearer ${vendor}` },
    });
    assert.equal(jsonl.statusCode, 200);
    assert.match(String(jsonl.headers['content-type']), /ndjson/);
    const lines = jsonl.body
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    assert.equal(lines.length, total);
    for (let i = 1; i < lines.length; i++) assert.equal(lines[i].prevHash, lines[i - 1].hash, 'chain order');
    const csv = await t.app.inject({
      method: 'GET',
      url: '/audits/export?format=csv&tenantId=au-a',
      headers: { authorization: `Bearer ${vendor}` },
    });
    assert.equal(csv.statusCode, 200);
    const rows = csv.body.trim().split('\n');
    assert.equal(
      rows[0],
      'id,createdAt,tenantId,actorType,actorId,action,targetType,targetId,outcome,ip,userAgent,severity,data,hash,prevHash',
    );
    assert.equal(rows.length - 1, 6);
  });
});

describe('audit: the routes existing clients call (routes.md "Audits")', () => {
  const props = [
    { displayName: 'When', name: 'createdAt' },
    { displayName: 'Action', name: 'action' },
    { displayName: 'User', name: 'user' },
    { displayName: 'Status', name: 'data.statusCode' },
  ];
  const csv = async (url: string, body: unknown, token = vendor) => {
    const r = await t.app.inject({
      method: 'POST',
      url,
      payload: JSON.stringify(body),
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    });
    return {
      status: r.statusCode,
      type: String(r.headers['content-type']),
      lines: r.body.trim().split('\n'),
      body: r.body,
    };
  };

  test('POST /audits/export/csv (and /v2) export the matching entries with the chosen columns', async () => {
    const page = (await t.call('GET', '/audits?tenantId=au-a&sortDirection=asc&count=100', { token: vendor })).body;
    for (const path of ['/audits/export/csv', '/audits/export/csv/v2']) {
      const r = await csv(`${path}?vendorId=x&tenantId=au-a&offset=0&count=50`, { properties: props });
      assert.equal(r.status, 201, r.body);
      assert.match(r.type, /text\/csv/);
      assert.equal(r.lines[0], 'When,Action,User,Status');
      assert.deepEqual(
        r.lines.slice(1),
        page.data.map((e: any) => [e.createdAt, e.action, e.actor.id ?? '', e.data.statusCode ?? ''].join(',')),
      );
    }
    // A column named after an Object.prototype member is just an empty column (it once broke the stream).
    const proto = await csv('/audits/export/csv?tenantId=au-a', {
      properties: [
        { displayName: 'P', name: '__proto__' },
        { displayName: 'C', name: 'constructor' },
      ],
    });
    assert.equal(proto.status, 201, proto.body);
    assert.equal(proto.lines[0], 'P,C');
    assert.ok(proto.lines.length > 1 && proto.lines.slice(1).every((l: string) => l === ','), proto.body);
    assert.equal((await csv('/audits/export/csv?tenantId=au-a', {})).status, 400, 'properties is required');
    assert.equal((await csv('/audits/export/csv?tenantId=au-a', { properties: [{ displayName: 'x' }] })).status, 400);
    const user = await t.userToken({ tenantId: 'au-a', permissions: ['fe.secure.read.audits'] });
    assert.equal((await csv('/audits/export/csv?tenantId=au-b', { properties: props }, user)).status, 403);
    const exports = await t.call('GET', '/audits?action=audit.export', { token: vendor });
    assert.ok(exports.body.total >= 2, 'an export is itself audited');
  });

  test('GET /audits/resources/audits/v2 filters by created_from/created_to, tenant_ids, users, email; its CSV export', async () => {
    const all = (await t.call('GET', '/audits?tenantId=au-a&sortDirection=asc&count=100', { token: vendor })).body;
    const V2 = '/audits/resources/audits/v2';
    const r = await t.call('GET', `${V2}?tenant_ids=au-a&count=2&sortDirection=asc`, { token: vendor });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.equal(r.body.total, all.total);
    assert.deepEqual(
      r.body.data.map((e: any) => e.id),
      all.data.slice(0, 2).map((e: any) => e.id),
    );
    const both = await t.call('GET', `${V2}?tenant_ids=au-a,au-missing`, { token: vendor });
    assert.equal(both.body.total, all.total + 1, 'a list: au-a and the failed update of au-missing');
    const repeated = await t.call('GET', `${V2}?tenant_ids=au-a&tenant_ids=au-missing`, { token: vendor });
    assert.equal(repeated.body.total, both.body.total);
    assert.equal(
      (await t.call('GET', `${V2}?tenant_ids=au-a&created_to=2000-01-01T00:00:00Z`, { token: vendor })).body.total,
      0,
    );
    assert.equal(
      (
        await t.call('GET', `${V2}?tenant_ids=au-a&created_from=${encodeURIComponent(all.data[1].createdAt)}`, {
          token: vendor,
        })
      ).body.total,
      all.total - 1,
    );
    const userId = all.data.find((e: any) => e.actor.type === 'user').actor.id;
    const byUser = await t.call('GET', `${V2}?users=${userId}`, { token: vendor });
    assert.ok(byUser.body.total >= 2 && byUser.body.data.every((e: any) => e.actor.id === userId));
    const byEmail = await t.call('GET', `${V2}?email=AU@a.test`, { token: vendor });
    assert.deepEqual(byEmail.body.data.map((e: any) => `${e.action} ${e.outcome}`).sort(), [
      'user.sign_in failure',
      'user.sign_in success',
    ]);
    assert.equal((await t.call('GET', `${V2}?created_from=yesterday`, { token: vendor })).status, 400);
    const user = await t.userToken({ tenantId: 'au-a', permissions: ['fe.secure.read.audits'] });
    assert.equal((await t.call('GET', `${V2}?tenant_ids=au-b`, { token: user })).status, 403);
    assert.equal((await t.call('GET', V2, { token: user })).body.total, all.total);

    const exp = await csv(`${V2}/export/csv?tenant_ids=au-a`, {
      properties: [
        { displayName: 'Id', name: 'id' },
        { displayName: 'Actor', name: 'actor.type' },
      ],
    });
    assert.equal(exp.status, 200, exp.body);
    assert.equal(exp.lines[0], 'Id,Actor');
    assert.deepEqual(
      exp.lines.slice(1),
      all.data.map((e: any) => `${e.id},${e.actor.type}`),
    );
  });
});

describe('audit: tamper evidence and retention', () => {
  test('no route edits or deletes an entry', async () => {
    const [e] = (await t.call('GET', '/audits?count=1', { token: vendor })).body.data;
    for (const method of ['PUT', 'PATCH', 'DELETE']) {
      assert.equal(
        (
          await t.call(method, `/audits/${e.id}`, {
            token: vendor,
            body: method === 'DELETE' ? undefined : { action: 'x' },
          })
        ).status,
        404,
      );
    }
  });

  test('verify is intact; retention removes old entries and the chain stays verifiable from its anchor', async () => {
    const v = await t.call('GET', '/audits/verify', { token: vendor });
    assert.equal(v.status, 200);
    assert.equal(v.body.intact, true);
    assert.ok(v.body.checked >= 10);
    assert.equal(
      (await t.call('GET', '/audits/verify', { token: await t.userToken({ tenantId: 'au-a', permissions: ['*'] }) }))
        .status,
      403,
    );
    // Everything is "older than retention" one year from now (plus a minute).
    const removed = await t.ctx.audit.applyRetention(new Date(Date.now() + 366 * 86_400_000));
    assert.ok(removed >= 10);
    await account(t, { id: 'au-r', name: 'R' });
    const after = await t.call('GET', '/audits/verify', { token: vendor });
    assert.deepEqual(after.body, { intact: true, checked: 1 }, 'the one entry since (verify is a read: not audited)');
  });

  test('editing or deleting a row directly in the database is reported by verify', async () => {
    for (const id of ['au-t1', 'au-t2', 'au-t3']) await account(t, { id });
    const { data } = await entriesSince('2000-01-01T00:00:00Z');
    const victim = data.find((e) => e.target.id === 'au-t2');
    await t.db.query(`UPDATE audit_log SET outcome = 'failure' WHERE id = $1`, [victim.id]);
    const edited = await t.call('GET', '/audits/verify', { token: vendor });
    assert.equal(edited.body.intact, false);
    assert.equal(edited.body.firstBrokenId, victim.id);
    await t.db.query(`UPDATE audit_log SET outcome = 'success' WHERE id = $1`, [victim.id]);
    assert.equal((await t.call('GET', '/audits/verify', { token: vendor })).body.intact, true);

    await t.db.query('DELETE FROM audit_log WHERE id = $1', [victim.id]);
    const next = data.find((e) => e.target.id === 'au-t3');
    const deleted = await t.call('GET', '/audits/verify', { token: vendor });
    assert.equal(deleted.body.intact, false);
    assert.equal(deleted.body.firstBrokenId, next.id, 'the entry after the removed one no longer links');
  });
});
