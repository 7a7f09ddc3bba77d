import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startTestApp, type TestApp } from '../helpers/harness.ts';
import { account } from '../fixtures/builders.ts';

const URL_ = '/tenants/resources/account-settings/v1';
const PUBLIC = `${URL_}/public`;
const READ = 'fe.account-settings.read';
const WRITE = 'fe.account-settings.write';

const EMPTY = {
  applicationUrl: null,
  loginUrl: null,
  address: null,
  timezone: null,
  dateFormat: null,
  timeFormat: null,
  currency: null,
  logo: null,
};

let t: TestApp;
let vendor: string;
before(async () => {
  t = await startTestApp();
  vendor = await t.vendorToken();
});
after(async () => t?.close());

const asVendor = (tenantId: string, alias = false) => ({
  token: vendor,
  headers: { [alias ? 'frontegg-tenant-id' : 'gatehouse-tenant-id']: tenantId },
});

async function settingsOf(tenantId: string) {
  const r = await t.call('GET', URL_, asVendor(tenantId));
  assert.equal(r.status, 200, JSON.stringify(r.body));
  return r.body;
}

describe('account settings: vendor token', () => {
  test('GET answers every setting, null where unset', async () => {
    const { id } = await account(t, {
      fields: {
        applicationUrl: 'https://app.example.com',
        logoUrl: 'https://cdn.example.com/x.png',
        website: 'https://example.com',
      },
    });
    const r = await t.call('GET', URL_, asVendor(id));
    assert.equal(r.status, 200);
    assert.deepEqual(r.body, { ...EMPTY, tenantId: id, applicationUrl: 'https://app.example.com' });
  });

  test('PUT sets settings and answers the full settings; GET sees them; the frontegg alias header works', async () => {
    const { id } = await account(t);
    const body = {
      applicationUrl: 'https://app.example.com/home',
      loginUrl: 'http://login.example.com:8080/oauth/login?x=1',
      address: '1 Main Street\nSpringfield',
      timezone: 'Europe/Berlin',
      dateFormat: 'dd/MM/yyyy',
      timeFormat: 'HH:mm',
      currency: 'EUR',
      logo: 'https://cdn.example.com/logo.png',
    };
    const put = await t.call('PUT', URL_, { ...asVendor(id, true), body });
    assert.equal(put.status, 200, JSON.stringify(put.body));
    assert.deepEqual(put.body, { tenantId: id, ...body });
    assert.deepEqual(await settingsOf(id), { tenantId: id, ...body });
    const viaAlias = await t.call('GET', URL_, asVendor(id, true));
    assert.equal(viaAlias.status, 200);
    assert.deepEqual(viaAlias.body, { tenantId: id, ...body });
  });

  test('PUT of some settings leaves the others alone; the /frontegg prefix answers too', async () => {
    const { id } = await account(t, { fields: { timezone: 'UTC', currency: 'USD' } });
    const put = await t.call('PUT', `/frontegg${URL_}`, { ...asVendor(id), body: { currency: 'GBP' } });
    assert.equal(put.status, 200);
    assert.deepEqual(put.body, { ...EMPTY, tenantId: id, timezone: 'UTC', currency: 'GBP' });
  });

  test('missing header is a 400; a header naming no live account is a 404', async () => {
    const missing = await t.call('GET', URL_, { token: vendor });
    assert.equal(missing.status, 400);
    assert.equal(missing.body.errorCode, 'GH-20006');
    const putMissing = await t.call('PUT', URL_, { token: vendor, body: { currency: 'EUR' } });
    assert.equal(putMissing.status, 400);
    assert.equal(putMissing.body.errorCode, 'GH-20006');

    const unknown = await t.call('GET', URL_, asVendor('no-such-account'));
    assert.equal(unknown.status, 404);
    assert.equal(unknown.body.errorCode, 'GH-30001');
    assert.match(unknown.body.errors[0], /no-such-account/);
    const putUnknown = await t.call('PUT', URL_, { ...asVendor('no-such-account'), body: { currency: 'EUR' } });
    assert.equal(putUnknown.status, 404);
    assert.equal(putUnknown.body.errorCode, 'GH-30001');
  });

  test('a removed account is a 404', async () => {
    const { id } = await account(t);
    assert.equal((await t.call('DELETE', `/tenants/resources/tenants/v1/${id}`, { token: vendor })).status, 200);
    assert.equal((await t.call('GET', URL_, asVendor(id))).status, 404);
    assert.equal((await t.call('PUT', URL_, { ...asVendor(id), body: { currency: 'EUR' } })).status, 404);
    assert.equal((await t.call('GET', PUBLIC, { headers: { 'gatehouse-tenant-id': id } })).status, 404);
  });

  test('no token is a 401', async () => {
    const { id } = await account(t);
    assert.equal((await t.call('GET', URL_, { headers: { 'gatehouse-tenant-id': id } })).status, 401);
    assert.equal(
      (await t.call('PUT', URL_, { headers: { 'gatehouse-tenant-id': id }, body: { currency: 'EUR' } })).status,
      401,
    );
  });
});

describe('account settings: user token', () => {
  test('GET needs fe.account-settings.read; PUT needs fe.account-settings.write', async () => {
    const { id } = await account(t, { fields: { currency: 'USD' } });
    const none = await t.userToken({ tenantId: id });
    const g = await t.call('GET', URL_, { token: none });
    assert.equal(g.status, 403);
    assert.equal(g.body.errorCode, 'GH-20004');
    assert.match(g.body.errors[0], /fe\.account-settings\.read/);
    const p = await t.call('PUT', URL_, { token: none, body: { currency: 'EUR' } });
    assert.equal(p.status, 403);
    assert.match(p.body.errors[0], /fe\.account-settings\.write/);

    const reader = await t.userToken({ tenantId: id, permissions: [READ] });
    const r = await t.call('GET', URL_, { token: reader });
    assert.equal(r.status, 200);
    assert.deepEqual(r.body, { ...EMPTY, tenantId: id, currency: 'USD' });
    assert.equal((await t.call('PUT', URL_, { token: reader, body: { currency: 'EUR' } })).status, 403);
    assert.equal((await settingsOf(id)).currency, 'USD', 'a 403 changes nothing');

    const writer = await t.userToken({ tenantId: id, permissions: [WRITE] });
    const w = await t.call('PUT', URL_, { token: writer, body: { currency: 'EUR' } });
    assert.equal(w.status, 200);
    assert.deepEqual(w.body, { ...EMPTY, tenantId: id, currency: 'EUR' });
    assert.equal((await t.call('GET', URL_, { token: writer })).status, 403, 'write does not imply read');

    const wildcard = await t.userToken({ tenantId: id, permissions: ['fe.account-settings.*'] });
    assert.equal((await t.call('GET', URL_, { token: wildcard })).body.currency, 'EUR');
  });

  test('a user token acts on its own account even when a header names another', async () => {
    const mine = (await account(t, { fields: { currency: 'USD' } })).id;
    const other = (await account(t, { fields: { currency: 'JPY' } })).id;
    const token = await t.userToken({ tenantId: mine, permissions: [READ, WRITE] });
    const g = await t.call('GET', URL_, { token, headers: { 'gatehouse-tenant-id': other } });
    assert.equal(g.status, 200);
    assert.equal(g.body.tenantId, mine);
    assert.equal(g.body.currency, 'USD');
    const p = await t.call('PUT', URL_, { token, headers: { 'frontegg-tenant-id': other }, body: { currency: 'CHF' } });
    assert.equal(p.status, 200);
    assert.equal(p.body.tenantId, mine);
    assert.equal((await settingsOf(mine)).currency, 'CHF');
    assert.equal((await settingsOf(other)).currency, 'JPY', 'the other account is untouched');
  });

  test('a user token for an account that does not exist is a 404', async () => {
    const token = await t.userToken({ tenantId: 'ghost-account', permissions: [READ, WRITE] });
    const r = await t.call('GET', URL_, { token });
    assert.equal(r.status, 404);
    assert.equal(r.body.errorCode, 'GH-30001');
  });
});

describe('account settings: update rules', () => {
  test('an empty body, a body of unknown fields, and no body at all are 400 EMPTY_UPDATE; nothing changes', async () => {
    const { id } = await account(t, { fields: { currency: 'USD', timezone: 'UTC' } });
    const before = await settingsOf(id);
    const {
      rows: [{ updated_at: stamp }],
    } = await t.db.query<{ updated_at: Date }>('SELECT updated_at FROM tenants WHERE tenant_id = $1', [id]);
    for (const body of [{}, { foo: 'bar', tenantId: 'x', website: 'https://example.com' }, undefined, null]) {
      const r = await t.call('PUT', URL_, {
        ...asVendor(id),
        ...(body === null
          ? { raw: 'null', headers: { 'gatehouse-tenant-id': id, 'content-type': 'application/json' } }
          : { body }),
      });
      assert.equal(r.status, 400, `${JSON.stringify(body)}: ${JSON.stringify(r.body)}`);
      assert.equal(r.body.errorCode, 'GH-30008');
      assert.match(r.body.errors[0], /at least one of: name, applicationUrl/);
    }
    assert.deepEqual(await settingsOf(id), before);
    const {
      rows: [{ updated_at: after }],
    } = await t.db.query<{ updated_at: Date }>('SELECT updated_at FROM tenants WHERE tenant_id = $1', [id]);
    assert.equal(after.getTime(), stamp.getTime());
  });

  test('unknown fields next to settings are ignored', async () => {
    const { id } = await account(t);
    const r = await t.call('PUT', URL_, {
      ...asVendor(id),
      body: { currency: 'EUR', website: 'https://example.com', status: 'x' },
    });
    assert.equal(r.status, 200);
    const acc = await t.call('GET', `/tenants/resources/tenants/v2/${id}`, { token: vendor });
    assert.equal(acc.body.currency, 'EUR');
    assert.equal(acc.body.website, null);
    assert.equal(acc.body.status, null);
  });

  const invalid: [string, unknown, RegExp][] = [
    ['applicationUrl', 'app.example.com', /applicationUrl must be an absolute http\(s\) URL/],
    ['applicationUrl', 'ftp://files.example.com', /applicationUrl must use http or https/],
    ['applicationUrl', 'javascript:alert(1)', /applicationUrl must use http or https/],
    ['applicationUrl', 'https://exa mple.com', /applicationUrl must not contain whitespace/],
    ['applicationUrl', 'https://user:pw@example.com', /applicationUrl must not carry credentials/],
    [
      'applicationUrl',
      `https://example.com/${'a'.repeat(2100)}`,
      /body\.applicationUrl must NOT have more than 2048 characters/,
    ],
    ['loginUrl', '/login', /loginUrl must be an absolute http\(s\) URL/],
    ['loginUrl', 'mailto:a@example.com', /loginUrl must use http or https/],
    ['timezone', 'Mars/Olympus_Mons', /timezone must be an IANA time zone/],
    ['timezone', '+01:00', /timezone must be an IANA time zone/],
    ['timezone', 'CEST', /timezone must be an IANA time zone/],
    ['currency', 'usd', /currency must be an ISO 4217 code of 3 upper-case letters/],
    ['currency', 'EURO', /currency must be an ISO 4217 code/],
    ['currency', 'E1R', /currency must be an ISO 4217 code/],
    ['currency', 42, /body\.currency must be string/],
    ['dateFormat', 'd'.repeat(65), /body\.dateFormat must NOT have more than 64 characters/],
    ['dateFormat', 'dd\u0000MM', /dateFormat must not contain the NUL character/], // the input guard, before this module's rule
    ['timeFormat', 'HH:\u001bmm', /timeFormat must not contain control characters/],
    ['timeFormat', 'h'.repeat(65), /body\.timeFormat must NOT have more than 64 characters/],
    ['logo', 'not a url', /logo must be an http\(s\) URL or a data:image URL/],
    ['logo', 'data:text/html;base64,PGgxPg==', /logo must be a data URL of the form data:image/],
    ['logo', 'data:image/png;base64,***', /logo must be a data URL of the form data:image/],
    ['logo', `data:image/png;base64,${'A'.repeat(200_001)}`, /body\.logo must NOT have more than 200000 characters/],
    ['name', null, /name cannot be cleared/],
    ['name', '   ', /name cannot be cleared/],
    ['name', 'n'.repeat(256), /body\.name must NOT have more than 255 characters/],
    ['address', 'a'.repeat(2049), /body\.address must NOT have more than 2048 characters/],
    ['address', 'Main St\u0007', /address must not contain control characters/],
  ];
  for (const [field, value, message] of invalid) {
    test(`${field} = ${JSON.stringify(value).slice(0, 40)} is a 400 naming the field`, async () => {
      const { id } = await account(t, { fields: { name: 'Before', currency: 'USD' } });
      const before = await settingsOf(id);
      const r = await t.call('PUT', URL_, {
        ...asVendor(id),
        body: { [field]: value, currency: field === 'currency' ? value : 'EUR' },
      });
      assert.equal(r.status, 400, JSON.stringify(r.body).slice(0, 300));
      assert.match(r.body.errorCode, /^GH-10001$/);
      assert.match(r.body.errors.join('; '), message);
      assert.deepEqual(await settingsOf(id), before, 'a 400 changes nothing, not even the valid fields');
      assert.equal((await t.call('GET', `/tenants/resources/tenants/v2/${id}`, { token: vendor })).body.name, 'Before');
    });
  }

  test('several bad fields are reported together, each named', async () => {
    const { id } = await account(t);
    const r = await t.call('PUT', URL_, {
      ...asVendor(id),
      body: { timezone: 'Nowhere/City', currency: 'eur', loginUrl: 'x' },
    });
    assert.equal(r.status, 400);
    assert.match(r.body.errors[0], /loginUrl must/);
    assert.match(r.body.errors[0], /timezone must/);
    assert.match(r.body.errors[0], /currency must/);
    assert.deepEqual(r.body.context, { fields: ['loginUrl', 'timezone', 'currency'] });
  });

  test('valid forms: time zones (listed, UTC, links, any case), data-URL logos, trimmed values', async () => {
    const { id } = await account(t);
    const cases: [Record<string, unknown>, Record<string, unknown>][] = [
      [{ timezone: 'UTC' }, { timezone: 'UTC' }],
      [{ timezone: 'America/Argentina/Buenos_Aires' }, { timezone: 'America/Argentina/Buenos_Aires' }],
      [{ timezone: 'Asia/Kolkata' }, { timezone: 'Asia/Kolkata' }],
      [{ timezone: 'Etc/GMT+5' }, { timezone: 'Etc/GMT+5' }],
      [{ timezone: 'europe/berlin' }, { timezone: 'Europe/Berlin' }],
      [{ logo: 'data:image/png;base64,iVBORw0KGgo=' }, { logo: 'data:image/png;base64,iVBORw0KGgo=' }],
      [{ logo: 'data:image/svg+xml;base64,PHN2Zz48L3N2Zz4=' }, { logo: 'data:image/svg+xml;base64,PHN2Zz48L3N2Zz4=' }],
      [{ applicationUrl: '  https://app.example.com  ' }, { applicationUrl: 'https://app.example.com' }],
      [
        { dateFormat: 'yyyy-MM-dd', timeFormat: 'hh:mm a' },
        { dateFormat: 'yyyy-MM-dd', timeFormat: 'hh:mm a' },
      ],
    ];
    for (const [body, expected] of cases) {
      const r = await t.call('PUT', URL_, { ...asVendor(id), body });
      assert.equal(r.status, 200, `${JSON.stringify(body)}: ${JSON.stringify(r.body)}`);
      for (const [k, v] of Object.entries(expected)) assert.equal(r.body[k], v, k);
    }
  });

  test('null, or an empty string, clears a setting', async () => {
    const { id } = await account(t, {
      fields: {
        applicationUrl: 'https://app.example.com',
        loginUrl: 'https://app.example.com/login',
        currency: 'USD',
        address: 'Somewhere',
      },
    });
    const r = await t.call('PUT', URL_, { ...asVendor(id), body: { applicationUrl: null, address: '' } });
    assert.equal(r.status, 200);
    assert.deepEqual(r.body, { ...EMPTY, tenantId: id, loginUrl: 'https://app.example.com/login', currency: 'USD' });
    assert.deepEqual(await settingsOf(id), r.body);
    const pub = await t.call('GET', PUBLIC, { headers: { 'gatehouse-tenant-id': id } });
    assert.deepEqual(pub.body, { tenantId: id, applicationUrl: null, loginUrl: 'https://app.example.com/login' });
  });

  test('name changes the account name, visible through the accounts API; alone it is a valid update', async () => {
    const { id } = await account(t, { fields: { name: 'Old Name' } });
    const r = await t.call('PUT', URL_, { ...asVendor(id), body: { name: '  New Name  ' } });
    assert.equal(r.status, 200);
    assert.deepEqual(r.body, { ...EMPTY, tenantId: id });
    const acc = await t.call('GET', `/tenants/resources/tenants/v2/${id}`, { token: vendor });
    assert.equal(acc.status, 200);
    assert.equal(acc.body.name, 'New Name');
    const user = await t.userToken({ tenantId: id, permissions: [WRITE] });
    assert.equal(
      (await t.call('PUT', URL_, { token: user, body: { name: 'By User', timezone: 'Asia/Tokyo' } })).status,
      200,
    );
    const acc2 = await t.call('GET', `/tenants/resources/tenants/v2/${id}`, { token: vendor });
    assert.equal(acc2.body.name, 'By User');
    assert.equal(acc2.body.timezone, 'Asia/Tokyo');
  });
});

describe('account settings: public subset', () => {
  test('answers {tenantId, applicationUrl, loginUrl} without any token, by header or alias header', async () => {
    const { id } = await account(t, {
      fields: {
        applicationUrl: 'https://app.example.com',
        loginUrl: 'https://app.example.com/login',
        currency: 'USD',
        address: 'Private',
      },
    });
    for (const header of ['gatehouse-tenant-id', 'frontegg-tenant-id']) {
      const r = await t.call('GET', PUBLIC, { headers: { [header]: id } });
      assert.equal(r.status, 200);
      assert.deepEqual(r.body, {
        tenantId: id,
        applicationUrl: 'https://app.example.com',
        loginUrl: 'https://app.example.com/login',
      });
    }
  });

  test('with a user token and no header: the token account; a header wins over the token; a vendor token needs the header', async () => {
    const mine = (await account(t, { fields: { loginUrl: 'https://mine.example.com/login' } })).id;
    const other = (await account(t, { fields: { loginUrl: 'https://other.example.com/login' } })).id;
    const user = await t.userToken({ tenantId: mine });
    const a = await t.call('GET', PUBLIC, { token: user });
    assert.equal(a.status, 200);
    assert.deepEqual(a.body, { tenantId: mine, applicationUrl: null, loginUrl: 'https://mine.example.com/login' });
    const b = await t.call('GET', PUBLIC, { token: user, headers: { 'gatehouse-tenant-id': other } });
    assert.equal(b.body.tenantId, other);
    const v = await t.call('GET', PUBLIC, { token: vendor });
    assert.equal(v.status, 400);
    assert.equal(v.body.errorCode, 'GH-20006');
    assert.equal((await t.call('GET', PUBLIC, asVendor(other))).body.tenantId, other);
  });

  test('neither header nor token is a 400; unknown account a 404; a bad token a 401', async () => {
    const none = await t.call('GET', PUBLIC);
    assert.equal(none.status, 400);
    assert.equal(none.body.errorCode, 'GH-20006');
    const unknown = await t.call('GET', PUBLIC, { headers: { 'gatehouse-tenant-id': 'no-such-account' } });
    assert.equal(unknown.status, 404);
    assert.equal(unknown.body.errorCode, 'GH-30001');
    const bad = await t.call('GET', PUBLIC, { token: 'a.b.c', headers: { 'gatehouse-tenant-id': 'x' } });
    assert.equal(bad.status, 401);
  });
});
