import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { exportJWK, generateKeyPair, SignJWT } from 'jose';
import { startTestApp, type TestApp } from '../helpers/harness.ts';
import { startOidcIdp } from '../fixtures/sso/oidc-idp.ts';
import { account } from '../fixtures/builders.ts';

let t: TestApp;
let vendor: string;
let idp: Awaited<ReturnType<typeof startOidcIdp>>;
const PAGE_A = 'https://app.example/oidc/callback';
const PAGE_B = 'https://app.example/identity/oidc/callback';
const PAGE_C = 'https://app.example/body/oidc/callback';

before(async () => {
  idp = await startOidcIdp([
    {
      client_id: 'drop-in-sso',
      client_secret: 'drop-in-sso-secret-0123456789',
      redirect_uris: [PAGE_A, PAGE_B, PAGE_C],
    },
  ]);
  // The local providers listen on loopback: outbound requests to private addresses are allowed here.
  t = await startTestApp({ OUTBOUND_ALLOW_PRIVATE_NETWORKS: 'true' });
  vendor = await t.vendorToken();
});
after(async () => {
  await t?.close();
  await idp?.close();
});

describe('MFA policy: a device lifetime of 0 where nothing is remembered', () => {
  const P = '/identity/resources/configurations/v1/mfa-policy';
  test('0 is accepted with allowRememberMyDevice false and read back', async () => {
    await account(t, { id: 'mfa-zero' });
    const h = { 'gatehouse-tenant-id': 'mfa-zero' };
    const r = await t.call('PUT', P, {
      token: vendor,
      headers: h,
      body: { allowRememberMyDevice: false, mfaDeviceExpiration: 0 },
    });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.equal(r.body.mfaDeviceExpiration, 0);
    assert.equal(r.body.allowRememberMyDevice, false);
    assert.equal((await t.call('GET', P, { token: vendor, headers: h })).body.mfaDeviceExpiration, 0);
  });
  test('0 with remember-device on is 400 naming the field, and changes nothing', async () => {
    await account(t, { id: 'mfa-zero-on' });
    const h = { 'gatehouse-tenant-id': 'mfa-zero-on' };
    const bad = await t.call('PUT', P, {
      token: vendor,
      headers: h,
      body: { allowRememberMyDevice: true, mfaDeviceExpiration: 0 },
    });
    assert.equal(bad.status, 400);
    assert.match(bad.body.errors[0], /mfaDeviceExpiration/);
    assert.equal((await t.call('GET', P, { token: vendor, headers: h })).body.tenantId, null);
    // Turning remember-device on over a stored 0 is the same combination.
    assert.equal((await t.call('PUT', P, { token: vendor, headers: h, body: { mfaDeviceExpiration: 0 } })).status, 200);
    const on = await t.call('PATCH', P, { token: vendor, headers: h, body: { allowRememberMyDevice: true } });
    assert.equal(on.status, 400);
    assert.match(on.body.errors[0], /mfaDeviceExpiration/);
    const g = await t.call('GET', P, { token: vendor, headers: h });
    assert.equal(g.body.allowRememberMyDevice, false);
    const both = await t.call('PATCH', P, {
      token: vendor,
      headers: h,
      body: { allowRememberMyDevice: true, mfaDeviceExpiration: 600 },
    });
    assert.equal(both.status, 200, JSON.stringify(both.body));
    assert.equal(
      (await t.call('PATCH', P, { token: vendor, headers: h, body: { mfaDeviceExpiration: 0 } })).status,
      400,
    );
    assert.equal(
      (await t.call('PATCH', P, { token: vendor, headers: h, body: { mfaDeviceExpiration: 30 } })).status,
      400,
    );
  });
});

describe("SSO pre-login for OIDC uses the environment's redirect page", () => {
  const TENANT = 'drop-oidc';
  const PRELOGIN = '/identity/resources/auth/v2/user/sso/prelogin';
  const setPage = (prefix: string, body: Record<string, unknown>) =>
    t.call('POST', `${prefix}/resources/sso/v1/oidc/configurations`, { token: vendor, body });
  const redirectOf = (address: string) => new URL(address).searchParams.get('redirect_uri');

  before(async () => {
    idp.accounts.set('u-dora', { email: 'dora@drop-oidc.test', name: 'Dora' });
    await account(t, { id: TENANT });
    const env = await t.call('POST', '/identity/resources/configurations/v1', {
      token: vendor,
      body: { allowedRedirectUrls: [PAGE_A, PAGE_B, PAGE_C] },
    });
    assert.ok(env.status < 300, JSON.stringify(env.body));
    const made = await t.call('POST', '/team/resources/sso/v1/configurations', {
      token: vendor,
      headers: { 'gatehouse-tenant-id': TENANT },
      body: {
        type: 'oidc',
        enabled: true,
        oidcClientId: 'drop-in-sso',
        oidcSecret: 'drop-in-sso-secret-0123456789',
        configMetadata: { issuer: idp.issuer, scopes: 'openid email profile' },
      },
    });
    assert.equal(made.status, 201, JSON.stringify(made.body));
    const base = `/team/resources/sso/v1/configurations`;
    const dom = await t.call('POST', `${base}/${made.body.id}/domains`, {
      token: vendor,
      headers: { 'gatehouse-tenant-id': TENANT },
      body: { domain: 'drop-oidc.test' },
    });
    assert.equal(dom.status, 201, JSON.stringify(dom.body));
    await t.call('PUT', `${base}/domains/drop-oidc.test/force-validate`, { token: vendor, body: {} });
  });

  test('with no page set, {email} alone is a 400 naming redirectUri', async () => {
    const r = await t.call('POST', PRELOGIN, { body: { email: 'dora@drop-oidc.test' } });
    assert.equal(r.status, 400);
    assert.match(r.body.errors[0], /redirectUri/);
  });

  test('{email} alone uses the stored page, and the sign-in finishes through it', async () => {
    assert.equal((await setPage('/team', { active: true, redirectUri: PAGE_A })).status, 201);
    const r = await t.call('POST', PRELOGIN, { body: { email: 'dora@drop-oidc.test' } });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.equal(r.body.type, 'oidc');
    assert.equal(redirectOf(r.body.address), PAGE_A);
    idp.state.nextLogin = 'u-dora';
    const cb = await idp.authorize(r.body.address, PAGE_A);
    const done = await t.call('POST', '/identity/resources/auth/v1/user/oidc/postlogin', {
      body: {
        code: cb.searchParams.get('code'),
        state: cb.searchParams.get('state'),
        iss: cb.searchParams.get('iss') ?? undefined,
      },
    });
    assert.equal(done.status, 200, JSON.stringify(done.body));
    assert.ok(done.body.accessToken);
  });

  test('the /identity twin sets the same page; a body redirectUri still wins', async () => {
    assert.equal((await setPage('/identity', { active: true, redirectUri: PAGE_B })).status, 201);
    const r = await t.call('POST', PRELOGIN, { body: { email: 'dora@drop-oidc.test' } });
    assert.equal(redirectOf(r.body.address), PAGE_B);
    const own = await t.call('POST', PRELOGIN, { body: { email: 'dora@drop-oidc.test', redirectUri: PAGE_C } });
    assert.equal(redirectOf(own.body.address), PAGE_C);
  });

  test('an inactive page is not used; a page no longer allow-listed is refused', async () => {
    assert.equal((await setPage('/team', { active: false })).status, 201);
    const off = await t.call('POST', PRELOGIN, { body: { email: 'dora@drop-oidc.test' } });
    assert.equal(off.status, 400);
    assert.match(off.body.errors[0], /redirectUri/);
    assert.equal((await setPage('/team', { active: true })).status, 201);
    await t.call('POST', '/identity/resources/configurations/v1', {
      token: vendor,
      body: { allowedRedirectUrls: [PAGE_C] },
    });
    const gone = await t.call('POST', PRELOGIN, { body: { email: 'dora@drop-oidc.test' } });
    assert.equal(gone.status, 400);
    assert.match(gone.body.errors[0], /redirect page/);
    await t.call('POST', '/identity/resources/configurations/v1', {
      token: vendor,
      body: { allowedRedirectUrls: [PAGE_A, PAGE_B, PAGE_C] },
    });
  });
});

describe('Accounts: alias, and GET /tenants/resources/tenants/v2/alias/{alias}', () => {
  const V1 = '/tenants/resources/tenants/v1';
  const V2 = '/tenants/resources/tenants/v2';
  test('an alias set on create finds the account (any case); unknown is 404', async () => {
    const made = (await account(t, { id: 'alias-one', fields: { alias: 'Acme-Corp' } })).body;
    assert.equal(made.alias, 'Acme-Corp');
    const r = await t.call('GET', `${V2}/alias/Acme-Corp`, { token: vendor });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.equal(r.body.tenantId, 'alias-one');
    assert.equal(r.body.alias, 'Acme-Corp');
    assert.equal((await t.call('GET', `${V2}/alias/acme-corp`, { token: vendor })).body.tenantId, 'alias-one');
    const none = await t.call('GET', `${V2}/alias/no-such-alias`, { token: vendor });
    assert.equal(none.status, 404);
    assert.match(none.body.errors[0], /alias no-such-alias/);
    assert.equal((await t.call('GET', `${V2}/alias-one`, { token: vendor })).body.alias, 'Acme-Corp');
    // The route needs the environment's token.
    assert.equal((await t.call('GET', `${V2}/alias/Acme-Corp`)).status, 401);
  });
  test('a duplicate alias is 409 on create and update and changes nothing', async () => {
    const dup = await t.call('POST', V1, {
      token: vendor,
      body: { tenantId: 'alias-two', name: 'two', alias: 'ACME-corp' },
    });
    assert.equal(dup.status, 409);
    assert.match(dup.body.errors[0], /alias/);
    assert.equal((await t.call('GET', `${V2}/alias-two`, { token: vendor })).body.length, 0);
    await account(t, { id: 'alias-two', fields: { alias: 'two' } });
    const upd = await t.call('PUT', `${V2}/alias-two`, {
      token: vendor,
      body: { alias: 'acme-corp', name: 'renamed' },
    });
    assert.equal(upd.status, 409);
    const still = await t.call('GET', `${V2}/alias-two`, { token: vendor });
    assert.equal(still.body.alias, 'two');
    assert.equal(still.body.name, 'alias-two');
  });
  test('update sets and clears it; a removed account frees its alias; bad aliases are 400', async () => {
    await account(t, { id: 'alias-three' });
    const set = await t.call('PUT', `${V2}/alias-three`, { token: vendor, body: { alias: 'third' } });
    assert.equal(set.status, 200, JSON.stringify(set.body));
    assert.equal((await t.call('GET', `${V2}/alias/third`, { token: vendor })).body.tenantId, 'alias-three');
    assert.equal((await t.call('PUT', `${V2}/alias-three`, { token: vendor, body: { alias: null } })).body.alias, null);
    assert.equal((await t.call('GET', `${V2}/alias/third`, { token: vendor })).status, 404);
    assert.equal((await t.call('DELETE', `${V1}/alias-one`, { token: vendor })).status, 200);
    assert.equal((await t.call('GET', `${V2}/alias/Acme-Corp`, { token: vendor })).status, 404);
    assert.equal(
      (await t.call('PUT', `${V2}/alias-three`, { token: vendor, body: { alias: 'acme-corp' } })).status,
      200,
    );
    const bad = await t.call('PUT', `${V2}/alias-three`, { token: vendor, body: { alias: 'has space' } });
    assert.equal(bad.status, 400);
    assert.match(JSON.stringify(bad.body.errors), /alias/);
    assert.equal(
      (await t.call('POST', V1, { token: vendor, body: { tenantId: 'alias-four', alias: '' } })).status,
      400,
    );
  });
});

describe('Accounts: aliases through the account migration', () => {
  test('aliases are imported; one another account holds or an earlier item names is an item error', async () => {
    const V2 = '/tenants/resources/tenants/v2';
    await account(t, { id: 'mig-alias-live', fields: { alias: 'held-alias' } });
    const items = [
      { tenantId: 'mig-alias-1', alias: 'fresh-alias' },
      { tenantId: 'mig-alias-2', alias: 'HELD-alias' },
      { tenantId: 'mig-alias-3', alias: 'Fresh-Alias' },
      { tenantId: 'mig-alias-4' },
    ];
    const r = await t.call('POST', '/tenants/resources/migrations/v1/tenants', {
      token: vendor,
      body: { tenants: items },
    });
    assert.equal(r.status, 202, JSON.stringify(r.body));
    let s: any;
    for (let i = 0; i < 300; i++) {
      s = (
        await t.call('GET', `/tenants/resources/migrations/v1/tenants/status/${r.body.migrationId}`, { token: vendor })
      ).body;
      if (s.state === 'completed') break;
      await new Promise((done) => setTimeout(done, 20));
    }
    assert.equal(s.state, 'completed', JSON.stringify(s));
    assert.deepEqual(s.errors.map((e: any) => [e.index, e.code]).sort(), [
      [1, 'GH-10030'],
      [2, 'GH-10030'],
    ]);
    assert.equal((await t.call('GET', `${V2}/alias/fresh-alias`, { token: vendor })).body.tenantId, 'mig-alias-1');
    assert.equal((await t.call('GET', `${V2}/mig-alias-4`, { token: vendor })).body.alias, null);
    assert.equal((await t.call('GET', `${V2}/mig-alias-2`, { token: vendor })).body.length, 0);
  });
});

describe('Social sign-in: unvouched emails make unverified users; OpenID tokens are verified', () => {
  const CB = PAGE_C;
  const people: Record<string, { sub: string; email?: string; email_verified?: boolean }> = {};
  const tweak: { kind?: 'rogueKey' | 'wrongIss' | 'wrongAud' | 'wrongNonce' | 'unsigned' } = {};
  let base = '';
  let server: Server;
  let rogue: CryptoKey;

  /** A local OpenID provider per path prefix: authorize, token (RS256 ID tokens), jwks. */
  before(async () => {
    const { privateKey, publicKey } = await generateKeyPair('RS256');
    rogue = (await generateKeyPair('RS256')).privateKey;
    const jwks = { keys: [{ ...(await exportJWK(publicKey)), kid: 'k1', alg: 'RS256', use: 'sig' }] };
    const codes = new Map<string, { name: string; clientId: string; nonce: string }>();
    server = createServer(async (req, res) => {
      const url = new URL(req.url!, 'http://x');
      const [, name, op] = url.pathname.split('/');
      const json = (status: number, v: unknown) => {
        res.writeHead(status, { 'content-type': 'application/json' });
        res.end(JSON.stringify(v));
      };
      if (op === 'jwks') return json(200, jwks);
      if (op === 'authorize') {
        const code = randomUUID();
        const q = url.searchParams;
        codes.set(code, { name, clientId: q.get('client_id')!, nonce: q.get('nonce')! });
        const back = new URL(q.get('redirect_uri')!);
        back.searchParams.set('code', code);
        back.searchParams.set('state', q.get('state')!);
        res.writeHead(302, { location: back.href });
        return res.end();
      }
      if (op === 'token') {
        let raw = '';
        for await (const chunk of req) raw += chunk;
        const c = codes.get(new URLSearchParams(raw).get('code') ?? '');
        if (!c || c.name !== name) return json(400, { error: 'invalid_grant' });
        const who = people[name];
        const claims = {
          nonce: tweak.kind === 'wrongNonce' ? 'another-nonce' : c.nonce,
          ...(who.email ? { email: who.email } : {}),
          ...(who.email_verified !== undefined ? { email_verified: who.email_verified } : {}),
        };
        const jwt = new SignJWT(claims)
          .setProtectedHeader({ alg: 'RS256', kid: 'k1' })
          .setIssuer(tweak.kind === 'wrongIss' ? 'https://elsewhere.example' : `${base}/${name}`)
          .setAudience(tweak.kind === 'wrongAud' ? 'another-client' : c.clientId)
          .setSubject(who.sub)
          .setIssuedAt()
          .setExpirationTime('5m');
        let idToken = await jwt.sign(tweak.kind === 'rogueKey' ? rogue : privateKey);
        if (tweak.kind === 'unsigned') {
          const [h, p] = idToken.split('.');
          idToken = `${h}.${p}.${Buffer.from('not a signature').toString('base64url')}`;
        }
        return json(200, { access_token: `at-${randomUUID()}`, token_type: 'Bearer', id_token: idToken });
      }
      json(404, {});
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    await t.call('POST', '/identity/resources/configurations/v1', {
      token: vendor,
      body: { allowedRedirectUrls: [PAGE_A, PAGE_B, PAGE_C], allowSignups: false },
    });
    for (const name of ['quiet-id', 'sure-id']) {
      const made = await t.call('POST', '/identity/resources/sso/custom/v1', {
        token: vendor,
        body: {
          type: name,
          clientId: `client-${name}`,
          secret: `secret-${name}-0123456789`,
          redirectUrl: CB,
          active: true,
          authorizationUrl: `${base}/${name}/authorize`,
          tokenUrl: `${base}/${name}/token`,
          issuer: `${base}/${name}`,
          jwksUrl: `${base}/${name}/jwks`,
          scopes: 'openid email',
          allowSignups: true,
        },
      });
      assert.equal(made.status, 200, JSON.stringify(made.body));
    }
  });
  after(async () => {
    await new Promise<void>((r) => server?.close(() => r()));
  });

  async function signIn(name: string) {
    const pre = await t.call('POST', `/identity/resources/auth/v1/user/sso/${name}/prelogin`, { body: {} });
    assert.equal(pre.status, 200, JSON.stringify(pre.body));
    const res = await fetch(pre.body.address, { redirect: 'manual' });
    const back = new URL(res.headers.get('location')!);
    return t.call('POST', `/identity/resources/auth/v1/user/sso/${name}/postlogin`, {
      body: { code: back.searchParams.get('code'), state: back.searchParams.get('state') },
    });
  }
  const claimsOf = (token: string) => JSON.parse(Buffer.from(token.split('.')[1], 'base64url').toString());

  test('no email_verified: a new user is created unverified and signed in', async () => {
    people['quiet-id'] = { sub: 'q-1', email: 'quiet.new@social-drop.test' };
    const r = await signIn('quiet-id');
    assert.equal(r.status, 200, JSON.stringify(r.body));
    const c = claimsOf(r.body.accessToken);
    const user = await t.call('GET', `/identity/resources/users/v1/${c.sub}`, {
      token: vendor,
      headers: { 'gatehouse-tenant-id': c.tenantId },
    });
    assert.equal(user.body.email, 'quiet.new@social-drop.test');
    assert.equal(user.body.verified, false);
    // The same subject signs in again (linked by subject).
    assert.equal((await signIn('quiet-id')).status, 200);
  });

  test('an unvouched email of an existing user is not linked (403)', async () => {
    await account(t, { id: 'social-drop' });
    const made = await t.call('POST', '/identity/resources/users/v1', {
      token: vendor,
      headers: { 'gatehouse-tenant-id': 'social-drop' },
      body: { email: 'owner@social-drop.test', name: 'Owner', password: 'Very-Long-Passw0rd!x' },
    });
    assert.equal(made.status, 201, JSON.stringify(made.body));
    people['quiet-id'] = { sub: 'q-2', email: 'owner@social-drop.test', email_verified: false };
    const r = await signIn('quiet-id');
    assert.equal(r.status, 403);
    assert.equal(r.body.errorCode, 'GH-66018');
    people['quiet-id'] = { sub: 'q-3', email: 'owner@social-drop.test' };
    assert.equal((await signIn('quiet-id')).status, 403);
  });

  test('a later vouched sign-in proves the address and drops the unvouched link', async () => {
    people['quiet-id'] = { sub: 'q-squatter', email: 'victim@social-drop.test' };
    const squat = await signIn('quiet-id');
    assert.equal(squat.status, 200, JSON.stringify(squat.body));
    people['sure-id'] = { sub: 's-owner', email: 'victim@social-drop.test', email_verified: true };
    const owner = await signIn('sure-id');
    assert.equal(owner.status, 200, JSON.stringify(owner.body));
    assert.equal(owner.body.userId, squat.body.userId);
    const again = await signIn('quiet-id');
    assert.equal(again.status, 403, 'the unvouched identity no longer reaches the proven user');
  });

  for (const kind of ['rogueKey', 'unsigned', 'wrongIss', 'wrongAud', 'wrongNonce'] as const) {
    test(`an ID token with ${kind} is refused (401) and signs no one in`, async () => {
      people['sure-id'] = { sub: `s-${kind}`, email: `${kind.toLowerCase()}@social-drop.test`, email_verified: true };
      tweak.kind = kind;
      try {
        const r = await signIn('sure-id');
        assert.equal(r.status, 401, JSON.stringify(r.body));
        assert.equal(r.body.errorCode, 'GH-66017');
      } finally {
        tweak.kind = undefined;
      }
      const u = await t.call('GET', `/identity/resources/users/v1/email?email=${kind.toLowerCase()}@social-drop.test`, {
        token: vendor,
      });
      assert.notEqual(u.status, 200);
    });
  }
});
