import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startTestApp, type TestApp } from '../helpers/harness.ts';
import { account } from '../fixtures/builders.ts';

let t: TestApp;
let vendor: string;
const V1 = '/tenants/resources/tenants/v1';
const V2 = '/tenants/resources/tenants/v2';

before(async () => {
  t = await startTestApp();
  vendor = await t.vendorToken();
});
after(async () => t?.close());

const create = (body: unknown) => t.call('POST', V1, { token: vendor, body });
const get = (id: string) => t.call('GET', `${V2}/${id}`, { token: vendor });

describe('accounts: create, get, update', () => {
  test('create answers the whole account record', async () => {
    const r = await create({
      tenantId: 'acme',
      name: 'Acme',
      website: 'https://acme.test',
      timezone: 'Europe/Paris',
      creatorEmail: 'a@acme.test',
    });
    assert.equal(r.status, 201);
    const a = r.body;
    assert.equal(a.tenantId, 'acme');
    assert.equal(a.name, 'Acme');
    assert.equal(a.metadata, '{}');
    assert.equal(a.isReseller, false);
    assert.equal(a.subAccountAccessType, 'defaultOff');
    assert.equal(a.parentTenantId, null);
    assert.equal(a.website, 'https://acme.test');
    assert.equal(a.deletedAt, null);
    assert.match(a.createdAt, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    for (const k of [
      'id',
      'status',
      'applicationUrl',
      'loginUrl',
      'logo',
      'logoUrl',
      'address',
      'dateFormat',
      'timeFormat',
      'currency',
      'creatorName',
      'updatedAt',
    ]) {
      assert.ok(k in a, `record has ${k}`);
    }
    assert.deepEqual((await get('acme')).body, a);
  });

  test('create without tenantId generates one; metadata may be an object or a JSON string', async () => {
    const r = await create({ name: 'NoId', metadata: { plan: 'pro' } });
    assert.equal(r.status, 201);
    assert.match(r.body.tenantId, /^[0-9a-f-]{36}$/);
    assert.deepEqual(JSON.parse(r.body.metadata), { plan: 'pro' });
    const s = await create({ tenantId: 'strmeta', name: 'S', metadata: '{"a":1}' });
    assert.deepEqual(JSON.parse(s.body.metadata), { a: 1 });
  });

  test('every create field is optional (routes.md): a missing name is the tenantId', async () => {
    const bare = await create({});
    assert.equal(bare.status, 201, JSON.stringify(bare.body));
    assert.equal(bare.body.name, bare.body.tenantId);
    const named = await create({ tenantId: 'noname' });
    assert.equal(named.status, 201);
    assert.equal(named.body.name, 'noname');
    assert.equal((await get('noname')).body.name, 'noname');
  });

  test('duplicate live id is a 409; bad fields are 400 and create nothing', async () => {
    const dup = await create({ tenantId: 'acme', name: 'Again' });
    assert.equal(dup.status, 409);
    assert.equal(dup.body.errorCode, 'GH-30002');
    assert.equal((await get('acme')).body.name, 'Acme');

    const cases: [unknown, RegExp][] = [
      [{ tenantId: 'x2', name: '' }, /body\.name/],
      [{ tenantId: 'bad id!', name: 'x' }, /body\.tenantId must match pattern/],
      [{ tenantId: 'x3', name: 12 }, /body\.name must be string/],
      [{ tenantId: 'x4', name: 'x', isReseller: 'yes' }, /body\.isReseller must be boolean/],
      [{ tenantId: 'x5', name: 'x', metadata: '[1,2]' }, /metadata must be a JSON object/],
      [{ tenantId: 'x6', name: 'x', metadata: '{oops' }, /not valid JSON/],
      [{ tenantId: 'x7', name: 'x'.repeat(256) }, /body\.name must NOT have more than 255 characters/],
    ];
    for (const [body, msg] of cases) {
      const r = await create(body);
      assert.equal(r.status, 400, JSON.stringify(body));
      assert.match(r.body.errors.join(' '), msg);
    }
    for (const id of ['x1', 'x2', 'x3', 'x4', 'x5', 'x6', 'x7']) assert.deepEqual((await get(id)).body, []);
  });

  test('create under a parent; unknown parent is a 404', async () => {
    const r = await create({ tenantId: 'acme-eu', name: 'Acme EU', parentTenantId: 'acme' });
    assert.equal(r.status, 201);
    assert.equal(r.body.parentTenantId, 'acme');
    const bad = await create({ tenantId: 'orphan', name: 'O', parentTenantId: 'nobody' });
    assert.equal(bad.status, 404);
    assert.match(bad.body.errors[0], /parentTenantId nobody/);
    assert.deepEqual((await get('orphan')).body, []);
  });

  test('get v2 of an absent account is an empty array; v1 answers arrays with a Deprecation header', async () => {
    const none = await get('missing');
    assert.equal(none.status, 200);
    assert.deepEqual(none.body, []);
    const v1 = await t.call('GET', `${V1}/acme`, { token: vendor });
    assert.equal(v1.status, 200);
    assert.equal(v1.headers.deprecation, 'true');
    assert.match(String(v1.headers.link), /tenants\/v2\/acme>; rel="successor-version"/);
    assert.equal(v1.body.length, 1);
    assert.equal(v1.body[0].tenantId, 'acme');
    assert.deepEqual((await t.call('GET', `${V1}/missing`, { token: vendor })).body, []);
  });

  test('update v2 changes only given fields; v1 too, deprecated; empty and unknown are errors', async () => {
    const before = (await get('acme')).body;
    const r = await t.call('PUT', `${V2}/acme`, { token: vendor, body: { name: 'Acme Inc', currency: 'EUR' } });
    assert.equal(r.status, 200);
    assert.equal(r.body.name, 'Acme Inc');
    assert.equal(r.body.currency, 'EUR');
    assert.equal(r.body.website, before.website);
    assert.ok(r.body.updatedAt >= before.updatedAt);
    const v1 = await t.call('PUT', `${V1}/acme`, { token: vendor, body: { status: 'active' } });
    assert.equal(v1.status, 200);
    assert.equal(v1.headers.deprecation, 'true');
    assert.equal(v1.body.status, 'active');
    assert.equal(v1.body.name, 'Acme Inc');
    const empty = await t.call('PUT', `${V2}/acme`, { token: vendor, body: {} });
    assert.equal(empty.status, 400);
    const unknown = await t.call('PUT', `${V2}/nobody`, { token: vendor, body: { name: 'x' } });
    assert.equal(unknown.status, 404);
    assert.equal(unknown.body.errorCode, 'GH-30001');
    const bad = await t.call('PUT', `${V2}/acme`, { token: vendor, body: { name: null } });
    assert.equal(bad.status, 400);
    assert.equal((await get('acme')).body.name, 'Acme Inc');
  });
});

describe('accounts: metadata', () => {
  test('add merges and overwrites; delete removes one key', async () => {
    await account(t, { id: 'meta', name: 'Meta', fields: { metadata: { a: 1, b: 2 } } });
    const r = await t.call('POST', `${V1}/meta/metadata`, {
      token: vendor,
      body: { metadata: { b: 3, c: { deep: true } } },
    });
    assert.equal(r.status, 200);
    assert.deepEqual(JSON.parse(r.body.metadata), { a: 1, b: 3, c: { deep: true } });
    const d = await t.call('DELETE', `${V1}/meta/metadata/a`, { token: vendor });
    assert.equal(d.status, 200);
    assert.deepEqual(JSON.parse(d.body.metadata), { b: 3, c: { deep: true } });
    const again = await t.call('DELETE', `${V1}/meta/metadata/a`, { token: vendor });
    assert.equal(again.status, 404);
    assert.equal(again.body.errorCode, 'GH-30006');
  });

  test('metadata that is not an object is a 400; unknown account a 404', async () => {
    for (const metadata of ['text', [1], 5, null]) {
      const r = await t.call('POST', `${V1}/meta/metadata`, { token: vendor, body: { metadata } });
      assert.equal(r.status, 400, JSON.stringify(metadata));
      assert.match(r.body.errors[0], /body\.metadata must be object/);
    }
    assert.equal((await t.call('POST', `${V1}/meta/metadata`, { token: vendor, body: {} })).status, 400);
    assert.equal(
      (await t.call('POST', `${V1}/ghost/metadata`, { token: vendor, body: { metadata: { a: 1 } } })).status,
      404,
    );
    assert.equal((await t.call('DELETE', `${V1}/ghost/metadata/a`, { token: vendor })).status, 404);
    assert.deepEqual(JSON.parse((await get('meta')).body.metadata), { b: 3, c: { deep: true } });
  });
});

describe('accounts: removal and reactivation', () => {
  test('delete by id: gone, children move to its parent, second delete is 404', async () => {
    await account(t, { id: 'top', name: 'Top' });
    await account(t, { id: 'mid', name: 'Mid', parentTenantId: 'top' });
    await account(t, { id: 'leaf1', name: 'Leaf 1', parentTenantId: 'mid' });
    await account(t, { id: 'leaf2', name: 'Leaf 2', parentTenantId: 'mid' });
    const d = await t.call('DELETE', `${V1}/mid`, { token: vendor });
    assert.equal(d.status, 200);
    assert.equal(d.body.tenantId, 'mid');
    assert.ok(d.body.deletedAt);
    assert.deepEqual((await get('mid')).body, []);
    assert.equal((await get('leaf1')).body.parentTenantId, 'top');
    assert.equal((await get('leaf2')).body.parentTenantId, 'top');
    const again = await t.call('DELETE', `${V1}/mid`, { token: vendor });
    assert.equal(again.status, 404);
  });

  test('removing a root leaves its children at the top', async () => {
    await t.call('DELETE', `${V1}/top`, { token: vendor });
    assert.equal((await get('leaf1')).body.parentTenantId, null);
  });

  test('create with a removed id reactivates it with nothing stale', async () => {
    const fields = { website: 'https://old.test', metadata: { old: true }, isReseller: true };
    await account(t, { id: 'phoenix', name: 'Old', parentTenantId: 'acme', fields });
    const hs = await t.call('PUT', `/tenants/resources/sub-tenants/v1/phoenix/hierarchy-settings`, {
      token: vendor,
      body: { subAccountAccessType: 'alwaysOn' },
    });
    assert.equal(hs.status, 200);
    const old = (await get('phoenix')).body;
    assert.equal(old.subAccountAccessType, 'alwaysOn');
    await t.call('DELETE', `${V1}/phoenix`, { token: vendor });
    const r = await create({ tenantId: 'phoenix', name: 'New' });
    assert.equal(r.status, 201);
    assert.equal(r.body.name, 'New');
    assert.equal(r.body.website, null);
    assert.equal(r.body.metadata, '{}');
    assert.equal(r.body.isReseller, false);
    assert.equal(r.body.parentTenantId, null);
    assert.equal(r.body.subAccountAccessType, 'defaultOff');
    assert.equal(r.body.deletedAt, null);
    assert.notEqual(r.body.id, old.id);
  });

  test('delete current account needs a user token with fe.account-settings.delete.account', async () => {
    await account(t, { id: 'self', name: 'Self' });
    const vendorTry = await t.call('DELETE', V1, { token: vendor });
    assert.equal(vendorTry.status, 403);
    const noPerm = await t.call('DELETE', V1, { token: await t.userToken({ tenantId: 'self' }) });
    assert.equal(noPerm.status, 403);
    assert.equal(noPerm.body.errorCode, 'GH-20004');
    assert.equal((await get('self')).body.tenantId, 'self');
    const ok = await t.call('DELETE', V1, {
      token: await t.userToken({ tenantId: 'self', permissions: ['fe.account-settings.*'] }),
    });
    assert.equal(ok.status, 200);
    assert.equal(ok.body.tenantId, 'self');
    assert.deepEqual((await get('self')).body, []);
    const twice = await t.call('DELETE', V1, {
      token: await t.userToken({ tenantId: 'self', permissions: ['fe.account-settings.delete.account'] }),
    });
    assert.equal(twice.status, 404);
  });
});

describe('accounts: list v2', () => {
  before(async () => {
    for (let i = 0; i < 25; i++) {
      await account(t, { id: `list-${String(i).padStart(2, '0')}`, name: i % 2 ? `Beta ${i}` : `alpha ${i}` });
    }
  });

  test('defaults: page 0 of 50, ascending by createdAt, envelope with metadata and links', async () => {
    const r = await t.call('GET', `${V2}?_tenantIds=list-00,list-01,list-02`, { token: vendor });
    assert.equal(r.status, 200);
    assert.deepEqual(
      r.body.items.map((a: any) => a.tenantId),
      ['list-00', 'list-01', 'list-02'],
    );
    assert.deepEqual(r.body._metadata, { totalItems: 3, totalPages: 1 });
    assert.equal(r.body._links.next, '');
    assert.equal(r.body._links.prev, '');
    assert.match(r.body._links.first, /_offset=0/);
  });

  test('_offset is a page index; pages do not overlap and cover everything once', async () => {
    const seen: string[] = [];
    let total = 0;
    for (let page = 0; ; page++) {
      const r = await t.call('GET', `${V2}?_filter=list-&_limit=7&_offset=${page}&_sortBy=tenantId`, { token: vendor });
      total = r.body._metadata.totalItems;
      assert.equal(r.body._metadata.totalPages, Math.ceil(total / 7));
      if (r.body.items.length === 0) break;
      seen.push(...r.body.items.map((a: any) => a.tenantId));
      if (page < r.body._metadata.totalPages - 1) assert.match(r.body._links.next, new RegExp(`_offset=${page + 1}`));
    }
    assert.equal(total, 25);
    assert.equal(seen.length, 25);
    assert.deepEqual(seen, [...seen].sort());
    assert.equal(new Set(seen).size, 25);
  });

  test('sort by name is case-insensitive, ties broken by tenantId; DESC reverses', async () => {
    const asc = await t.call('GET', `${V2}?_filter=list-&_sortBy=name&_order=ASC&_limit=200`, { token: vendor });
    const names = asc.body.items.map((a: any) => a.name.toLowerCase());
    assert.deepEqual(
      names,
      [...names].sort((x: string, y: string) => (x < y ? -1 : x > y ? 1 : 0)),
    );
    assert.equal(asc.body.items[0].name, 'alpha 0');
    const desc = await t.call('GET', `${V2}?_filter=list-&_sortBy=name&_order=DESC&_limit=200`, { token: vendor });
    assert.deepEqual(
      desc.body.items.map((a: any) => a.tenantId),
      asc.body.items.map((a: any) => a.tenantId).reverse(),
    );
  });

  test('a page past the middle (read from the far end) equals the same slice of the full list', async () => {
    const all = (
      await t.call('GET', `${V2}?_filter=list-&_sortBy=createdAt&_order=DESC&_limit=200`, { token: vendor })
    ).body.items.map((a: any) => a.tenantId);
    for (const page of [0, 1, 2, 3, 4]) {
      const r = await t.call('GET', `${V2}?_filter=list-&_sortBy=createdAt&_order=DESC&_limit=6&_offset=${page}`, {
        token: vendor,
      });
      assert.deepEqual(
        r.body.items.map((a: any) => a.tenantId),
        all.slice(page * 6, page * 6 + 6),
        `page ${page}`,
      );
    }
  });

  test('filter matches name or tenant id, case-insensitively; LIKE characters are literal', async () => {
    const r = await t.call('GET', `${V2}?_filter=BETA 1&_limit=200`, { token: vendor });
    assert.ok(r.body.items.length > 0);
    for (const a of r.body.items) assert.match(a.name, /beta 1/i);
    const pct = await t.call('GET', `${V2}?_filter=%25&_limit=200`, { token: vendor });
    assert.equal(pct.body._metadata.totalItems, 0);
    const removed = await t.call('GET', `${V2}?_filter=mid&_limit=200`, { token: vendor });
    assert.ok(!removed.body.items.some((a: any) => a.tenantId === 'mid'), 'removed accounts are not listed');
  });

  test('bad list parameters are 400s naming the parameter', async () => {
    const cases: [string, RegExp][] = [
      ['_limit=201', /querystring\._limit must be <= 200/],
      ['_limit=0', /querystring\._limit must be >= 1/],
      ['_limit=abc', /querystring\._limit must be integer/],
      ['_offset=-1', /querystring\._offset must be >= 0/],
      ['_sortBy=color', /querystring\._sortBy/],
      ['_order=UP', /querystring\._order/],
    ];
    for (const [q, msg] of cases) {
      const r = await t.call('GET', `${V2}?${q}`, { token: vendor });
      assert.equal(r.status, 400, q);
      assert.match(r.body.errors.join(' '), msg, q);
    }
  });

  test('a page beyond the end is empty with the true totals', async () => {
    const r = await t.call('GET', `${V2}?_filter=list-&_limit=10&_offset=99`, { token: vendor });
    assert.deepEqual(r.body.items, []);
    assert.equal(r.body._metadata.totalItems, 25);
    assert.match(r.body._links.prev, /_offset=2/);
  });
});

describe('accounts: input the database would refuse', () => {
  test('self-parenting, NUL characters and lone surrogates are 4xx, never 500, and create nothing', async () => {
    const self = await create({ tenantId: 'selfish', name: 'S', parentTenantId: 'selfish' });
    assert.equal(self.status, 409);
    assert.equal(self.body.errorCode, 'GH-30003');
    const nul = await create({ tenantId: 'nul-name', name: 'a\u0000b' });
    assert.equal(nul.status, 400);
    const meta = await create({ tenantId: 'nul-meta', name: 'x', metadata: { k: 'a\u0000b' } });
    assert.equal(meta.status, 400);
    const path = await t.call('GET', `${V2}/a%00b`, { token: vendor });
    assert.ok(path.status < 500, `status ${path.status}`);
    for (const id of ['selfish', 'nul-name', 'nul-meta']) assert.deepEqual((await get(id)).body, []);
  });

  test('tenant ids up to 255 characters work in paths', async () => {
    const long = 'L'.repeat(255);
    assert.equal((await create({ tenantId: long, name: 'Long' })).status, 201);
    assert.equal((await get(long)).body.tenantId, long);
  });
});
