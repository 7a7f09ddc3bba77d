import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { decrypt, keyFromString } from '../../src/lib/crypto.ts';
import { startTestApp, type TestApp } from '../helpers/harness.ts';
import { account, user } from '../fixtures/builders.ts';

let t: TestApp;
let vendor: string;
const S = '/identity/resources/user-sources/v1';
const BUILT_IN = '00000000-0000-4000-8000-00000000b001';
const SECRET = 'auth0-client-secret-d41d8cd98f00b204';
let defaultApp: string;
let portalApp: string;
const users: Record<string, string> = {};

const v = (method: string, url: string, body?: unknown) => t.call(method, url, { token: vendor, body });
const auth0Config = (over: Record<string, unknown> = {}) => ({
  syncOnLogin: false,
  isMigrated: true,
  domain: 'acme.eu.auth0.com',
  clientId: 'abc123',
  secret: SECRET,
  tenantConfig: { type: 'static', tenantId: 'up-acme' },
  ...over,
});

before(async () => {
  t = await startTestApp();
  vendor = await t.vendorToken();
  await account(t, { id: 'up-acme', name: 'Acme' });
  for (const email of ['ann@acme.test', 'ben@acme.test'])
    users[email] = (await user(t, 'up-acme', { email, password: null })).id;
  const apps = await v('GET', '/applications/resources/applications/v1');
  defaultApp = apps.body.find((a: any) => a.isDefault).id;
  const portal = await v('POST', '/applications/resources/applications/v1', { name: 'Portal' });
  assert.equal(portal.status, 201, JSON.stringify(portal.body));
  portalApp = portal.body.id;
});
after(async () => t?.close());

describe('user pools', () => {
  let auth0: string;

  test('the built-in pool is always there and holds every application and user', async () => {
    const r = await v('GET', S);
    assert.equal(r.status, 200);
    assert.equal(r.body.length, 1);
    const [pool] = r.body;
    assert.equal(pool.id, BUILT_IN);
    assert.equal(pool.type, 'gatehouse');
    assert.equal(pool.index, 0);
    assert.deepEqual([...pool.appIds].sort(), [defaultApp, portalApp].sort());
    assert.equal(pool.usersCount, 2);
    const members = await v('GET', `${S}/${BUILT_IN}/users`);
    assert.deepEqual(
      members.body.items.map((u: any) => u.email),
      ['ann@acme.test', 'ben@acme.test'],
    );
    assert.equal(members.body.items[0].lastLogin, null);
    assert.equal(members.body._metadata.totalItems, 2);
    const del = await v('DELETE', `${S}/${BUILT_IN}`);
    assert.equal(del.status, 409);
    assert.equal(del.body.errorCode, 'GH-65013');
  });

  test('create an external source: fields checked per type; the secret is sealed and never answered', async () => {
    const missing = await v('POST', `${S}/external/auth0`, {
      name: 'Legacy',
      index: 1,
      configuration: auth0Config({ domain: undefined }),
    });
    assert.equal(missing.status, 400);
    assert.match(missing.body.errors[0], /domain/);
    const unknownApp = await v('POST', `${S}/external/auth0`, {
      name: 'Legacy',
      index: 1,
      configuration: auth0Config(),
      appIds: ['00000000-0000-4000-8000-000000000000'],
    });
    assert.equal(unknownApp.status, 400);
    assert.equal(unknownApp.body.errorCode, 'GH-40007');

    const r = await v('POST', `${S}/external/auth0`, {
      name: 'Legacy Auth0',
      index: 1,
      description: 'before the move',
      configuration: auth0Config(),
    });
    assert.equal(r.status, 201, JSON.stringify(r.body));
    assert.deepEqual(r.body, {
      id: r.body.id,
      name: 'Legacy Auth0',
      type: 'auth0',
      appIds: [],
      description: 'before the move',
      index: 1,
    });
    auth0 = r.body.id;
    const got = await v('GET', `${S}/${auth0}`);
    assert.equal(got.status, 200);
    assert.equal(got.body.configuration.secret, '********');
    assert.equal(got.body.configuration.domain, 'acme.eu.auth0.com');
    assert.deepEqual(got.body.configuration.tenantConfig, { type: 'static', tenantId: 'up-acme' });
    assert.ok(!JSON.stringify(await v('GET', S)).includes(SECRET), 'no answer carries the secret');
    const { rows } = await t.db.query<{ row: string }>(
      'SELECT row_to_json(s)::text AS row FROM user_sources s WHERE id = $1',
      [auth0],
    );
    assert.ok(!rows[0].row.includes(SECRET), 'the stored row holds the secret sealed only');
    assert.match(rows[0].row, /"secrets_enc":"v1\./);

    for (const [segment, configuration] of [
      [
        'external/cognito',
        {
          syncOnLogin: true,
          isMigrated: false,
          region: 'eu-west-1',
          clientId: 'c',
          userPoolId: 'eu-west-1_x',
          accessKeyId: 'AKIA',
          secretAccessKey: 'sk',
          tenantConfig: {},
        },
      ],
      [
        'external/firebase',
        {
          syncOnLogin: false,
          isMigrated: false,
          apiKey: 'k',
          serviceAccount: { project_id: 'p', private_key: 'pk' },
          tenantConfig: {},
        },
      ],
      ['external/custom-code', { syncOnLogin: false, isMigrated: false, codePayload: 'return null', tenantConfig: {} }],
      [
        'federation',
        {
          syncOnLogin: true,
          wellknownUrl: 'https://idp.example/.well-known/openid-configuration',
          clientId: 'c',
          secret: 's',
          tenantConfig: {},
        },
      ],
    ] as const) {
      const c = await v('POST', `${S}/${segment}`, { name: segment, index: 5, configuration });
      assert.equal(c.status, 201, `${segment}: ${JSON.stringify(c.body)}`);
    }
    const badUrl = await v('POST', `${S}/federation`, {
      name: 'x',
      index: 5,
      configuration: { syncOnLogin: true, wellknownUrl: 'ftp://x', clientId: 'c', secret: 's', tenantConfig: {} },
    });
    assert.equal(badUrl.status, 400);
    assert.match(badUrl.body.errors[0], /wellknownUrl/);
    const all = await v('GET', S);
    assert.deepEqual(
      all.body.map((s: any) => s.type),
      ['gatehouse', 'auth0', 'cognito', 'custom-code', 'firebase', 'federation'],
      'by index, then name (external/… before federation)',
    );
    const firebase = all.body.find((s: any) => s.type === 'firebase');
    assert.deepEqual(firebase.configuration.serviceAccount, '********');
  });

  test('update: fields given are replaced; the placeholder keeps the stored secret; wrong type and built-in are refused', async () => {
    const r = await v('PUT', `${S}/external/auth0/${auth0}`, {
      name: 'Auth0 (old)',
      configuration: auth0Config({ secret: '********', syncOnLogin: true }),
    });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.equal(r.body.name, 'Auth0 (old)');
    assert.equal(r.body.configuration.syncOnLogin, true);
    assert.equal(r.body.configuration.secret, '********');
    const sealedSecret = async (id: string) => {
      const { rows } = await t.db.query<{ secrets_enc: string }>('SELECT secrets_enc FROM user_sources WHERE id = $1', [
        id,
      ]);
      return JSON.parse(decrypt(keyFromString('test-encryption-key'), rows[0].secrets_enc));
    };
    assert.deepEqual(await sealedSecret(auth0), { secret: SECRET }, 'the placeholder kept the stored secret');
    await v('PUT', `${S}/external/auth0/${auth0}`, { configuration: auth0Config({ secret: 'rotated-secret' }) });
    assert.deepEqual(await sealedSecret(auth0), { secret: 'rotated-secret' });
    const cognito = (await v('GET', S)).body.find((x: any) => x.type === 'cognito');
    assert.equal(cognito.configuration.clientSecret, undefined, 'an optional secret never given is absent');
    const placeholder = await v('PUT', `${S}/external/cognito/${cognito.id}`, {
      configuration: { ...cognito.configuration, clientSecret: '********' },
    });
    assert.equal(placeholder.status, 400);
    assert.match(placeholder.body.errors[0], /configuration\.clientSecret is the placeholder/);
    const wrong = await v('PUT', `${S}/external/cognito/${auth0}`, { name: 'x' });
    assert.equal(wrong.status, 400);
    assert.match(wrong.body.errors[0], /of type auth0; update it through the auth0 route/);
    assert.equal((await v('PUT', `${S}/external/auth0/${BUILT_IN}`, { name: 'x' })).status, 409);
    assert.equal(
      (await v('PUT', `${S}/external/auth0/00000000-0000-4000-8000-000000000000`, { name: 'x' })).status,
      404,
    );
  });

  test('assign: an application takes its users from one source; unassign returns it to the built-in pool', async () => {
    assert.equal(
      (
        await v('POST', '/identity/resources/applications/v1', {
          appId: portalApp,
          tenantId: 'up-acme',
          userIds: [users['ann@acme.test']],
        })
      ).status,
      201,
    );
    const a = await v('POST', `${S}/assign`, { userSourceId: auth0, appIds: [portalApp] });
    assert.equal(a.status, 201, JSON.stringify(a.body));
    assert.deepEqual(a.body.appIds, [portalApp]);
    const list = await v('GET', S);
    const byId = Object.fromEntries(list.body.map((s: any) => [s.id, s]));
    assert.deepEqual(byId[BUILT_IN].appIds, [defaultApp]);
    assert.equal(byId[auth0].usersCount, 1, 'users with access to its applications');
    const members = await v('GET', `${S}/${auth0}/users`);
    assert.deepEqual(
      members.body.items.map((u: any) => u.email),
      ['ann@acme.test'],
    );
    // Assigning to another source moves it.
    const other = list.body.find((s: any) => s.type === 'federation');
    await v('POST', `${S}/assign`, { userSourceId: other.id, appIds: [portalApp] });
    assert.deepEqual((await v('GET', `${S}/${auth0}`)).body.appIds, []);
    assert.equal((await v('POST', `${S}/assign`, { userSourceId: auth0, appIds: ['nope'] })).status, 400);
    const un = await v('POST', `${S}/unassign`, { userSourceId: other.id, appIds: [portalApp] });
    assert.equal(un.status, 201);
    assert.deepEqual((await v('GET', `${S}/${BUILT_IN}`)).body.appIds.sort(), [defaultApp, portalApp].sort());
    assert.equal((await v('POST', `${S}/unassign`, { userSourceId: BUILT_IN, appIds: [portalApp] })).status, 409);
  });

  test('delete an external source: its applications return to the built-in pool', async () => {
    await v('POST', `${S}/assign`, { userSourceId: auth0, appIds: [portalApp] });
    const d = await v('DELETE', `${S}/${auth0}`);
    assert.equal(d.status, 200);
    const gone = await v('GET', `${S}/${auth0}`);
    assert.equal(gone.status, 404);
    assert.equal(gone.body.errorCode, 'GH-65012');
    assert.ok((await v('GET', `${S}/${BUILT_IN}`)).body.appIds.includes(portalApp));
    assert.equal((await v('GET', `${S}/not-a-uuid`)).status, 404);
  });

  test('environment tokens only', async () => {
    const user = await t.userToken({ tenantId: 'up-acme', permissions: ['*'] });
    assert.equal((await t.call('GET', S, { token: user })).status, 403);
    assert.equal((await t.call('GET', S)).status, 401);
  });
});
