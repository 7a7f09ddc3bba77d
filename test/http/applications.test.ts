import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { startTestApp, type TestApp } from '../helpers/harness.ts';
import { account, signedIn, user } from '../fixtures/builders.ts';

let t: TestApp;
let vendor: string;
let defaultApp: string;
const users: Record<string, string> = {};
const A = '/applications/resources/applications/v1';
const T = '/applications/resources/applications/tenant-assignments';
const C = '/applications/application-clients';
const ACTIVE = '/identity/resources/applications/user-tenants/active/v1';
const UA = '/identity/resources/applications/v1';
const MISSING = '00000000-0000-4000-8000-000000000000';
const sha256 = (s: string) => createHash('sha256').update(s).digest('hex');

const v = (method: string, url: string, body?: unknown, headers?: Record<string, string>) =>
  t.call(method, url, { token: vendor, body, headers });
async function createApp(body: Record<string, unknown>): Promise<any> {
  const r = await v('POST', A, body);
  assert.equal(r.status, 201, JSON.stringify(r.body));
  return r.body;
}

const PASSWORD = 'a long enough password 42!';

before(async () => {
  t = await startTestApp({}, { jobs: false });
  vendor = await t.vendorToken();
  for (const tenantId of ['ap-acme', 'ap-beta', 'ap-gone']) await account(t, { id: tenantId });
  for (const [email, tenantId] of [
    ['ann@ap.test', 'ap-acme'],
    ['ben@ap.test', 'ap-beta'],
  ]) {
    users[email] = (await user(t, tenantId, { email, password: PASSWORD })).id;
  }
  // ann belongs to ap-acme and ap-beta and ap-gone.
  for (const tenantId of ['ap-beta', 'ap-gone'])
    assert.equal(
      (await v('POST', `/identity/resources/users/v1/${users['ann@ap.test']}/tenant`, { tenantId })).status,
      201,
    );
  defaultApp = (await v('GET', `${A}/default`)).body.id;
});
after(async () => t?.close());

describe('applications: get, update, delete', () => {
  test('get by id; PATCH changes only the fields sent; isDefault moves the default; bad input changes nothing', async () => {
    const app = await createApp({
      name: 'Portal',
      appURL: 'https://portal.test',
      loginURL: 'https://portal.test/login',
    });
    assert.equal(app.description, '');
    assert.deepEqual(app.metadata, {});
    const got = await v('GET', `${A}/${app.id}`);
    assert.equal(got.status, 200);
    assert.deepEqual(got.body, app);
    const patched = await v('PATCH', `${A}/${app.id}`, {
      name: 'Portal 2',
      accessType: 'MANAGED_ACCESS',
      description: 'd',
      metadata: { k: 1 },
      appHost: 'portal.test',
      allowDcr: true,
    });
    assert.equal(patched.status, 201, JSON.stringify(patched.body));
    assert.equal(patched.body.name, 'Portal 2');
    assert.equal(patched.body.appURL, 'https://portal.test', 'kept');
    assert.equal(patched.body.accessType, 'MANAGED_ACCESS');
    assert.deepEqual(
      [patched.body.description, patched.body.metadata, patched.body.appHost, patched.body.allowDcr],
      ['d', { k: 1 }, 'portal.test', true],
    );
    assert.deepEqual((await v('GET', `${A}/${app.id}`)).body, patched.body);

    for (const [body, field] of [
      [{}, /at least|fewer than 1|minProperties|body/],
      [{ accessType: 'NOPE' }, /accessType/],
      [{ name: '' }, /name/],
      [{ type: 'desktop' }, /type/],
    ] as const) {
      const r = await v('PATCH', `${A}/${app.id}`, body);
      assert.equal(r.status, 400, JSON.stringify(r.body));
      assert.match(r.body.errors.join(' '), field);
      assert.equal(r.body.errorCode, 'GH-10001');
    }
    assert.deepEqual((await v('GET', `${A}/${app.id}`)).body, patched.body, 'nothing changed');
    assert.equal((await v('GET', `${A}/${MISSING}`)).status, 404);
    assert.equal((await v('GET', `${A}/not-a-uuid`)).status, 404);
    assert.equal((await v('PATCH', `${A}/${MISSING}`, { name: 'x' })).status, 404);

    // The default moves with isDefault: true; the default cannot be unset.
    const moved = await v('PATCH', `${A}/${app.id}`, { isDefault: true });
    assert.equal(moved.body.isDefault, true);
    assert.equal((await v('GET', `${A}/default`)).body.id, app.id);
    assert.equal((await v('GET', `${A}/${defaultApp}`)).body.isDefault, false);
    const unset = await v('PATCH', `${A}/${app.id}`, { isDefault: false });
    assert.equal(unset.status, 409);
    assert.equal(unset.body.errorCode, 'GH-44005');
    assert.equal((await v('PATCH', `${A}/${defaultApp}`, { isDefault: true })).status, 201);
    assert.equal((await v('GET', `${A}/default`)).body.id, defaultApp);
  });

  test('delete removes the application and its assignments; the default one is refused (409)', async () => {
    const app = await createApp({ name: 'Doomed' });
    assert.equal(
      (await v('POST', UA, { appId: app.id, tenantId: 'ap-acme', userIds: [users['ann@ap.test']] })).status,
      201,
    );
    assert.equal((await v('POST', `${T}/v1/${app.id}`, { tenantId: 'ap-acme' })).status, 201);
    assert.equal((await v('POST', `${A}/credentials/regenerate`, { appId: app.id })).status, 201);
    assert.equal((await v('POST', C, { appId: app.id, clientName: 'bot', clientType: 'Agent' })).status, 201);
    const del = await v('DELETE', `${A}/${app.id}`);
    assert.equal(del.status, 200, JSON.stringify(del.body));
    assert.equal((await v('GET', `${A}/${app.id}`)).status, 404);
    assert.equal((await v('DELETE', `${A}/${app.id}`)).status, 404);
    for (const table of [
      'user_applications',
      'application_tenants',
      'application_credentials',
      'application_clients',
    ]) {
      assert.equal((await t.db.query(`SELECT 1 FROM ${table} WHERE app_id = $1`, [app.id])).rows.length, 0, table);
    }
    const def = await v('DELETE', `${A}/${defaultApp}`);
    assert.equal(def.status, 409);
    assert.equal(def.body.errorCode, 'GH-44005');
    assert.match(def.body.errors[0], /default/);
    assert.equal((await v('GET', `${A}/${defaultApp}`)).status, 200);
  });

  test('environment tokens only', async () => {
    const user = await t.userToken({ sub: users['ann@ap.test'], tenantId: 'ap-acme' });
    for (const [method, url] of [
      ['GET', `${A}/${defaultApp}`],
      ['PATCH', `${A}/${defaultApp}`],
      ['DELETE', `${A}/${defaultApp}`],
      ['POST', `${T}/v1/${defaultApp}`],
      ['GET', `${A}/credentials/${defaultApp}`],
      ['POST', `${A}/credentials/regenerate`],
      ['POST', C],
      ['GET', `${C}/app/${defaultApp}`],
      ['GET', `${UA}/apps-users?appIds=${defaultApp}`],
    ]) {
      const r = await t.call(method, url, {
        token: user,
        body: method === 'GET' || method === 'DELETE' ? undefined : { name: 'x' },
      });
      assert.equal(r.status, 403, `${method} ${url}: ${r.status}`);
    }
    assert.equal((await t.call('GET', `${A}/${defaultApp}`)).status, 401);
  });
});

describe('account assignments', () => {
  test('assign, list (v1, v2, per application), edit the access type, remove', async () => {
    const app = await createApp({ name: 'Managed', accessType: 'MANAGED_ACCESS' });
    const other = await createApp({ name: 'Free' });
    const a1 = await v('POST', `${T}/v1/${app.id}`, { tenantId: 'ap-acme' });
    assert.equal(a1.status, 201, JSON.stringify(a1.body));
    assert.deepEqual(a1.body, { tenantId: 'ap-acme', appIds: [app.id] });
    assert.equal((await v('POST', `${T}/v1/${app.id}`, { tenantId: 'ap-acme' })).status, 201, 'idempotent');
    assert.equal(
      (await v('POST', `${T}/v1/${app.id}`, { tenantId: 'ap-beta', accessType: 'FREE_ACCESS' })).status,
      201,
    );
    const a3 = await v('POST', `${T}/v1/${other.id}`, { tenantId: 'ap-acme' });
    assert.deepEqual(a3.body.appIds.sort(), [app.id, other.id].sort());

    assert.deepEqual((await v('GET', `${T}/v1/${app.id}`)).body, { tenantIds: ['ap-acme', 'ap-beta'] });
    const all = await v('GET', `${T}/v1?appIds=${app.id},${other.id}`);
    assert.equal(all.status, 200);
    assert.deepEqual(
      all.body.map((x: any) => [x.tenantId, x.appIds.sort()]),
      [
        ['ap-acme', [app.id, other.id].sort()],
        ['ap-beta', [app.id]],
      ],
    );
    const v2 = await v('GET', `${T}/v2?appIds=${app.id}`);
    assert.deepEqual(v2.body, [
      { tenantId: 'ap-acme', assignments: [{ appId: app.id, accessType: 'MANAGED_ACCESS' }] },
      { tenantId: 'ap-beta', assignments: [{ appId: app.id, accessType: 'FREE_ACCESS' }] },
    ]);
    assert.deepEqual(
      (await v('GET', `${T}/v2?appIds=${app.id}&accessType=FREE_ACCESS`)).body.map((x: any) => x.tenantId),
      ['ap-beta'],
    );
    assert.deepEqual(
      (await v('GET', `${T}/v1?appIds=${app.id}`, undefined, { 'gatehouse-tenant-id': 'ap-beta' })).body,
      [{ tenantId: 'ap-beta', appIds: [app.id] }],
    );
    // A user token sees its own account only, whatever it asks for.
    const user = await t.userToken({ sub: users['ben@ap.test'], tenantId: 'ap-beta' });
    assert.deepEqual(
      (await t.call('GET', `${T}/v1?tenantIds=ap-acme,ap-beta&appIds=${app.id}`, { token: user })).body,
      [{ tenantId: 'ap-beta', appIds: [app.id] }],
    );
    assert.deepEqual((await t.call('GET', `${T}/v1?tenantIds=ap-acme`, { token: user })).body, []);

    const put = await v('PUT', `${T}/v1/${app.id}/ap-beta`, { accessType: 'MANAGED_ACCESS' });
    assert.equal(put.status, 200, JSON.stringify(put.body));
    assert.equal(put.body.accessType, 'MANAGED_ACCESS');
    assert.equal((await v('PUT', `${T}/v1/${app.id}/ap-gone`, { accessType: 'MANAGED_ACCESS' })).status, 404);
    assert.equal((await v('DELETE', `${T}/v1/${app.id}/ap-beta`)).status, 200);
    assert.equal((await v('DELETE', `${T}/v1/${app.id}/ap-beta`)).status, 404);
    assert.deepEqual((await v('GET', `${T}/v1/${app.id}`)).body, { tenantIds: ['ap-acme'] });
  });

  test('bad input: unknown application or account, bad access type, too many ids', async () => {
    const app = await createApp({ name: 'Strict' });
    const cases: [string, string, unknown, number, RegExp][] = [
      ['POST', `${T}/v1/${MISSING}`, { tenantId: 'ap-acme' }, 404, /application/],
      ['POST', `${T}/v1/${app.id}`, { tenantId: 'nope' }, 404, /nope/],
      ['POST', `${T}/v1/${app.id}`, { tenantId: 'ap-acme', accessType: 'ALL' }, 400, /accessType/],
      ['POST', `${T}/v1/${app.id}`, {}, 400, /tenantId/],
      ['PUT', `${T}/v1/${app.id}/ap-acme`, {}, 400, /accessType/],
      ['GET', `${T}/v1?accessType=x`, undefined, 400, /accessType/],
      [
        'GET',
        `${T}/v1?tenantIds=${Array.from({ length: 201 }, (_, i) => `t${i}`).join(',')}`,
        undefined,
        400,
        /tenantIds/,
      ],
    ];
    for (const [method, url, body, status, message] of cases) {
      const r = await v(method, url, body);
      assert.equal(r.status, status, `${method} ${url} ${JSON.stringify(body)}: ${JSON.stringify(r.body)}`);
      assert.match(r.body.errors.join(' '), message);
    }
    assert.equal((await t.db.query('SELECT 1 FROM application_tenants WHERE app_id = $1', [app.id])).rows.length, 0);
  });

  test('removing an account drops its assignments; the same id created again starts with none', async () => {
    const app = await createApp({ name: 'Gone' });
    assert.equal((await v('POST', `${T}/v1/${app.id}`, { tenantId: 'ap-gone' })).status, 201);
    assert.equal((await v('DELETE', '/tenants/resources/tenants/v1/ap-gone')).status, 200);
    assert.equal((await t.db.query(`SELECT 1 FROM application_tenants WHERE tenant_id = 'ap-gone'`)).rows.length, 0);
    await account(t, { id: 'ap-gone', name: 'again' });
    assert.deepEqual((await v('GET', `${T}/v1/${app.id}`)).body, { tenantIds: [] });
  });
});

describe('credentials and clients', () => {
  test('a secret is whole once, on (re)generation, then masked; stored as SHA-256 only', async () => {
    const app = await createApp({ name: 'Creds' });
    const none = await v('GET', `${A}/credentials/${app.id}`);
    assert.equal(none.status, 200);
    assert.deepEqual(none.body, {
      appId: app.id,
      clientId: app.id,
      clientSecret: '',
      sharedSecret: '',
      clientSecretCreatedAt: null,
      sharedSecretCreatedAt: null,
    });
    const gen = await v('POST', `${A}/credentials/regenerate`, { appId: app.id });
    assert.equal(gen.status, 201, JSON.stringify(gen.body));
    const secret = gen.body.clientSecret;
    assert.match(secret, /^[A-Za-z0-9_-]{43}$/);
    assert.equal(gen.body.sharedSecret, '');
    const shared = await v('POST', `${A}/credentials/shared/regenerate`, { appId: app.id });
    assert.equal(shared.status, 201);
    assert.match(shared.body.sharedSecret, /^[A-Za-z0-9_-]{43}$/);
    assert.equal(shared.body.clientSecret, `****${secret.slice(-4)}`, 'the client secret is kept, masked');
    const read = await v('GET', `${A}/credentials/${app.id}`);
    assert.equal(read.body.clientSecret, `****${secret.slice(-4)}`);
    assert.equal(read.body.sharedSecret, `****${shared.body.sharedSecret.slice(-4)}`);
    assert.ok(read.body.clientSecretCreatedAt);
    const row = (await t.db.query<any>('SELECT * FROM application_credentials WHERE app_id = $1', [app.id])).rows[0];
    assert.equal(row.client_secret_hash, sha256(secret));
    assert.equal(row.shared_secret_hash, sha256(shared.body.sharedSecret));
    assert.ok(
      !JSON.stringify(row).includes(secret) && !JSON.stringify(row).includes(shared.body.sharedSecret),
      'no secret at rest',
    );
    const again = await v('POST', `${A}/credentials/regenerate`, { appId: app.id });
    assert.notEqual(again.body.clientSecret, secret);
    assert.equal(
      (await t.db.query<any>('SELECT client_secret_hash FROM application_credentials WHERE app_id = $1', [app.id]))
        .rows[0].client_secret_hash,
      sha256(again.body.clientSecret),
    );
    assert.equal((await v('POST', `${A}/credentials/regenerate`, { appId: MISSING })).status, 404);
    assert.equal((await v('POST', `${A}/credentials/regenerate`, {})).status, 400);
    assert.equal((await v('GET', `${A}/credentials/${MISSING}`)).status, 404);
  });

  test('clients: create (secret once), list by application, get, update, delete', async () => {
    const app = await createApp({ name: 'Agents' });
    const created = await v(
      'POST',
      C,
      {
        clientName: 'bot',
        clientType: 'Agent',
        redirectURLs: ['https://bot.test/cb'],
        externalMetadata: { team: 'x' },
      },
      { 'gatehouse-application-id': app.id },
    );
    assert.equal(created.status, 201, JSON.stringify(created.body));
    const c = created.body;
    assert.equal(c.appId, app.id);
    assert.match(c.clientSecret, /^[A-Za-z0-9_-]{43}$/);
    const stored = (await t.db.query<any>('SELECT secret_hash FROM application_clients WHERE id = $1', [c.id])).rows[0];
    assert.equal(stored.secret_hash, sha256(c.clientSecret));
    const masked = { ...c, clientSecret: `****${c.clientSecret.slice(-4)}` };
    assert.deepEqual((await v('GET', `${C}/${c.id}`)).body, masked);
    const second = await v('POST', C, { appId: app.id, clientName: 'bot 2', clientType: 'Agent' });
    assert.equal(second.status, 201);
    assert.deepEqual(second.body.redirectURLs, []);
    const list = await v('GET', `${C}/app/${app.id}`);
    assert.deepEqual(
      list.body.map((x: any) => x.id),
      [c.id, second.body.id],
    );
    assert.ok(list.body.every((x: any) => x.clientSecret.startsWith('****')));
    const patched = await v('PATCH', `${C}/${c.id}`, { clientName: 'robot', redirectURLs: [] });
    assert.equal(patched.status, 200, JSON.stringify(patched.body));
    assert.deepEqual(
      [patched.body.clientName, patched.body.redirectURLs, patched.body.externalMetadata],
      ['robot', [], { team: 'x' }],
    );
    assert.equal(patched.body.clientSecret, masked.clientSecret);
    const del = await v('DELETE', `${C}/${c.id}`);
    assert.equal(del.status, 204);
    assert.equal((await v('GET', `${C}/${c.id}`)).status, 404);
    assert.equal((await v('DELETE', `${C}/${c.id}`)).status, 404);
  });

  test('clients: bad input is a 400 naming the field; unknown application or client 404', async () => {
    const app = await createApp({ name: 'Agents 2' });
    const cases: [unknown, number, RegExp, Record<string, string>?][] = [
      [{ clientName: 'x', clientType: 'Agent' }, 400, /appId|gatehouse-application-id/],
      [{ appId: app.id, clientType: 'Agent' }, 400, /clientName/],
      [{ appId: app.id, clientName: 'x', clientType: 'Robot' }, 400, /clientType/],
      [{ appId: app.id, clientName: 'x', clientType: 'Agent', redirectURLs: ['not a url'] }, 400, /redirectURLs/],
      [{ appId: app.id, clientName: 'x', clientType: 'Agent', externalMetadata: 'x' }, 400, /externalMetadata/],
      [{ appId: MISSING, clientName: 'x', clientType: 'Agent' }, 404, /application/],
      [{ clientName: 'x', clientType: 'Agent' }, 404, /application/, { 'gatehouse-application-id': 'nope' }],
    ];
    for (const [body, status, message, headers] of cases) {
      const r = await v('POST', C, body, headers);
      assert.equal(r.status, status, `${JSON.stringify(body)}: ${JSON.stringify(r.body)}`);
      assert.match(r.body.errors.join(' '), message);
    }
    assert.equal((await t.db.query('SELECT 1 FROM application_clients WHERE app_id = $1', [app.id])).rows.length, 0);
    assert.equal((await v('PATCH', `${C}/${MISSING}`, { clientName: 'y' })).status, 404);
    assert.equal((await v('GET', `${C}/app/${MISSING}`)).status, 404);
  });
});

describe('users and applications', () => {
  test('active account per application: user token for itself, environment token with the user header', async () => {
    const free = await createApp({ name: 'Active free' });
    const managed = await createApp({ name: 'Active managed', accessType: 'MANAGED_ACCESS' });
    const ann = users['ann@ap.test'];
    // Switching the active account is the user's own: a signed-in session (no acting or machine token).
    const token = (await signedIn(t, { email: 'ann@ap.test', password: PASSWORD })).accessToken;
    assert.deepEqual((await t.call('GET', ACTIVE, { token })).body, { applicationActiveTenants: [] });
    const put = await t.call('PUT', ACTIVE, {
      token,
      body: { activeApplicationTenants: [{ applicationId: free.id, tenantId: 'ap-beta' }] },
    });
    assert.equal(put.status, 200, JSON.stringify(put.body));
    assert.deepEqual(put.body, { applicationActiveTenants: [{ applicationId: free.id, tenantId: 'ap-beta' }] });
    // Switch again (environment token, header), all or nothing.
    const bad = await v(
      'PUT',
      ACTIVE,
      {
        activeApplicationTenants: [
          { applicationId: free.id, tenantId: 'ap-acme' },
          { applicationId: managed.id, tenantId: 'ap-acme' },
        ],
      },
      { 'gatehouse-user-id': ann },
    );
    assert.equal(bad.status, 409, JSON.stringify(bad.body));
    assert.match(bad.body.errors[0], /activeApplicationTenants\[1\]\.tenantId/);
    assert.deepEqual(
      (await v('GET', ACTIVE, undefined, { 'gatehouse-user-id': ann })).body.applicationActiveTenants,
      [{ applicationId: free.id, tenantId: 'ap-beta' }],
      'unchanged',
    );
    assert.equal((await v('POST', `${T}/v1/${managed.id}`, { tenantId: 'ap-acme' })).status, 201);
    const ok = await v(
      'PUT',
      ACTIVE,
      {
        activeApplicationTenants: [
          { applicationId: free.id, tenantId: 'ap-acme' },
          { applicationId: managed.id, tenantId: 'ap-acme' },
        ],
      },
      { 'gatehouse-user-id': ann },
    );
    assert.equal(ok.status, 200, JSON.stringify(ok.body));
    assert.deepEqual(
      ok.body.applicationActiveTenants.map((x: any) => [x.applicationId, x.tenantId]).sort(),
      [
        [free.id, 'ap-acme'],
        [managed.id, 'ap-acme'],
      ].sort(),
    );

    const ben = users['ben@ap.test'];
    const cases: [Record<string, string>, unknown, number, RegExp][] = [
      [{}, { activeApplicationTenants: [{ applicationId: free.id, tenantId: 'ap-acme' }] }, 400, /gatehouse-user-id/],
      [
        { 'gatehouse-user-id': ben },
        { activeApplicationTenants: [{ applicationId: free.id, tenantId: 'ap-acme' }] },
        404,
        /not a member.*ap-acme/,
      ],
      [
        { 'gatehouse-user-id': ben },
        { activeApplicationTenants: [{ applicationId: MISSING, tenantId: 'ap-beta' }] },
        404,
        /applicationId/,
      ],
      [{ 'gatehouse-user-id': ben }, { activeApplicationTenants: [] }, 400, /activeApplicationTenants/],
      [
        { 'gatehouse-user-id': ben },
        {
          activeApplicationTenants: [
            { applicationId: free.id, tenantId: 'ap-beta' },
            { applicationId: free.id, tenantId: 'ap-beta' },
          ],
        },
        400,
        /twice/,
      ],
      [
        { 'gatehouse-user-id': MISSING },
        { activeApplicationTenants: [{ applicationId: free.id, tenantId: 'ap-beta' }] },
        404,
        /user/,
      ],
    ];
    for (const [headers, body, status, message] of cases) {
      const r = await v('PUT', ACTIVE, body, headers);
      assert.equal(r.status, status, `${JSON.stringify(body)}: ${JSON.stringify(r.body)}`);
      assert.match(r.body.errors.join(' '), message);
    }
    assert.deepEqual((await v('GET', ACTIVE, undefined, { 'gatehouse-user-id': ben })).body, {
      applicationActiveTenants: [],
    });
    assert.equal((await v('GET', ACTIVE)).status, 400);

    // Leaving the account drops the active account there.
    assert.equal(
      (await v('DELETE', `/identity/resources/users/v1/${ann}`, undefined, { 'gatehouse-tenant-id': 'ap-beta' }))
        .status,
      200,
    );
    assert.equal(
      (
        await v(
          'PUT',
          ACTIVE,
          { activeApplicationTenants: [{ applicationId: free.id, tenantId: 'ap-beta' }] },
          { 'gatehouse-user-id': ann },
        )
      ).status,
      404,
    );
  });

  test('apps-users and users-apps: assignments of several ids at once', async () => {
    const app = await createApp({ name: 'Multi' });
    const [ann, ben] = [users['ann@ap.test'], users['ben@ap.test']];
    assert.equal((await v('POST', UA, { appId: app.id, tenantId: 'ap-acme', userIds: [ann] })).status, 201);
    const au = await v('GET', `${UA}/apps-users?appIds=${app.id},${MISSING}&appIds=${defaultApp}`);
    assert.equal(au.status, 200, JSON.stringify(au.body));
    assert.deepEqual(au.body[0], { appId: app.id, userIds: [ann] });
    assert.equal(au.body.length, 2, 'the unknown id is left out');
    assert.equal(au.body[1].appId, defaultApp);
    const ua = await v('GET', `${UA}/users-apps?userIds=${ben},${ann}`);
    assert.equal(ua.status, 200);
    assert.deepEqual(
      ua.body.map((x: any) => x.userId),
      [ben, ann],
    );
    assert.ok(ua.body[1].appIds.includes(app.id));
    assert.ok(!ua.body[0].appIds.includes(app.id));
    const none = await v('GET', `${UA}/users-apps`);
    assert.equal(none.status, 400);
    assert.match(none.body.errors.join(' '), /userIds/);
  });
});
