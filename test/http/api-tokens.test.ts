import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { startTestApp, type TestApp } from '../helpers/harness.ts';
import { account, signedIn, user } from '../fixtures/builders.ts';

let t: TestApp;
let vendor: string;
const EXCHANGE = '/identity/resources/auth/v2/api-token';
const REFRESH = '/identity/resources/auth/v2/api-token/token/refresh';
const TENANT_TOKENS = '/identity/resources/tenants/api-tokens/v1';
const USER_TOKENS = '/identity/resources/users/api-tokens/v1';
const CONFIG = '/identity/resources/configurations/v1';
const USERS = '/identity/resources/users/v2';

const claims = (token: string) => JSON.parse(Buffer.from(token.split('.')[1], 'base64url').toString());
const sha256 = (s: string) => createHash('sha256').update(s).digest('hex');
const H = (tenantId: string, extra: Record<string, string> = {}) => ({ 'gatehouse-tenant-id': tenantId, ...extra });
const exchange = (clientId: string, secret: string) => t.call('POST', EXCHANGE, { body: { clientId, secret } });
const refresh = (refreshToken: string) => t.call('POST', REFRESH, { body: { refreshToken } });

let roleIds: Record<string, string> = {};
let permIds: Record<string, string> = {};

async function tenantToken(tenantId: string, body: Record<string, unknown> = {}, token = vendor) {
  const r = await t.call('POST', TENANT_TOKENS, { token, body, headers: H(tenantId) });
  assert.equal(r.status, 201, JSON.stringify(r.body));
  return r.body as { clientId: string; secret: string; [k: string]: unknown };
}
async function signIn(clientId: string, secret: string) {
  const r = await exchange(clientId, secret);
  assert.equal(r.status, 200, JSON.stringify(r.body));
  return r.body as { access_token: string; refresh_token: string; expires_in: number; expires: string };
}

before(async () => {
  t = await startTestApp();
  vendor = await t.vendorToken();
  for (const a of ['acme', 'globex', 'doomed']) await account(t, { id: a });
  await user(t, 'acme', { email: 'alice@acme.test' }); // first user: admin
  await user(t, 'acme', { email: 'bob@acme.test' }); // later user: read-only
  await user(t, 'globex', { email: 'gina@globex.test' });
  const roles = await t.call('GET', '/identity/resources/roles/v1', { token: vendor });
  roleIds = Object.fromEntries(roles.body.map((r: any) => [r.key, r.id]));
  const perms = await t.call('GET', '/identity/resources/permissions/v1', { token: vendor });
  permIds = Object.fromEntries(perms.body.map((p: any) => [p.key, p.id]));
});
after(async () => t?.close());

describe('client credentials: the service journey', () => {
  test('a service signs in with client credentials, reads the users of its account, and loses access when its token is deleted', async () => {
    const created = await tenantToken('acme', {
      description: 'billing sync',
      roleIds: [roleIds['read-only']],
      metadata: { team: 'billing' },
    });
    assert.match(created.clientId, /^[0-9a-f-]{36}$/);
    assert.ok(created.secret.length >= 43);
    assert.equal(created.tenantId, 'acme');
    assert.deepEqual(created.roleIds, [roleIds['read-only']]);
    assert.deepEqual(created.metadata, { team: 'billing' });
    assert.equal(created.expires, null);

    const s = await signIn(created.clientId, created.secret);
    assert.equal(s.expires_in, 300);
    assert.ok(Date.parse(s.expires) > Date.now());
    const c = claims(s.access_token);
    assert.equal(c.type, 'tenantApiToken');
    assert.equal(c.sub, created.clientId);
    assert.equal(c.tenantId, 'acme');
    assert.deepEqual(c.roles, ['read-only']);
    assert.ok(c.permissions.includes('fe.secure.read.users'));
    assert.ok(!c.permissions.includes('fe.secure.write.users'));

    const list = await t.call('GET', USERS, { token: s.access_token });
    assert.equal(list.status, 200, JSON.stringify(list.body));
    const emails = list.body.items.map((u: any) => u.email).sort();
    assert.deepEqual(emails, ['alice@acme.test', 'bob@acme.test'], 'only its own account, whatever header it sends');
    const spoof = await t.call('GET', USERS, { token: s.access_token, headers: H('globex') });
    assert.deepEqual(spoof.body.items.map((u: any) => u.email).sort(), emails);

    const write = await t.call('POST', '/identity/resources/users/v1', {
      token: s.access_token,
      body: { email: 'x@acme.test' },
    });
    assert.equal(write.status, 403);
    assert.equal(write.body.errorCode, 'GH-20004');

    // The account's IP restrictions refuse its sign-ins and refreshes from a blocked address (inject comes from 127.0.0.1).
    const IP = '/identity/resources/configurations/v1/restrictions/ip';
    assert.equal(
      (await t.call('POST', IP, { token: vendor, headers: H('acme'), body: { ip: '127.0.0.0/8', strategy: 'BLOCK' } }))
        .status,
      201,
    );
    const on = await t.call('POST', `${IP}/config`, {
      token: vendor,
      headers: H('acme'),
      body: { strategy: 'BLOCK', isActive: true },
    });
    assert.equal(on.status, 201, JSON.stringify(on.body));
    try {
      const blocked = await exchange(created.clientId, created.secret);
      assert.equal(blocked.status, 403);
      assert.equal(blocked.body.errorCode, 'GH-65005');
      assert.equal((await refresh(s.refresh_token)).status, 403);
    } finally {
      assert.equal(
        (await t.call('POST', `${IP}/config`, { token: vendor, headers: H('acme'), body: { isActive: false } })).status,
        201,
      );
    }
    const again = await exchange(created.clientId, created.secret);
    assert.equal(again.status, 200, 'allowed again once the restriction is off');

    const del = await t.call('DELETE', `${TENANT_TOKENS}/${created.clientId}`, { token: vendor, headers: H('acme') });
    assert.equal(del.status, 200);
    const after = await t.call('GET', USERS, { token: s.access_token });
    assert.equal(after.status, 401);
    assert.equal(after.body.errorCode, 'GH-64011');
    assert.equal((await exchange(created.clientId, created.secret)).status, 401);
    const r = await refresh(s.refresh_token);
    assert.equal(r.status, 401);
    assert.equal(r.body.errorCode, 'GH-64004');
  });

  test('the secret is shown once and stored only as SHA-256', async () => {
    const created = await tenantToken('acme', { description: 'once' });
    const list = await t.call('GET', TENANT_TOKENS, { token: vendor, headers: H('acme') });
    assert.equal(list.status, 200);
    const item = list.body.find((x: any) => x.clientId === created.clientId);
    assert.ok(item);
    assert.equal(item.secret, undefined);
    assert.equal(item.description, 'once');
    assert.equal(item.createdByUserId, '');
    const { rows } = await t.db.query<any>('SELECT * FROM api_tokens WHERE id = $1', [created.clientId]);
    assert.equal(rows[0].secret_hash, sha256(created.secret));
    assert.ok(!JSON.stringify(rows[0]).includes(created.secret));
  });

  test('v2 create answers the same record; list is per account', async () => {
    const r = await t.call('POST', '/identity/resources/tenants/api-tokens/v2', {
      token: vendor,
      body: { description: 'v2' },
      headers: H('globex'),
    });
    assert.equal(r.status, 201);
    assert.equal(r.body.tenantId, 'globex');
    const acme = await t.call('GET', TENANT_TOKENS, { token: vendor, headers: H('acme') });
    assert.ok(!acme.body.some((x: any) => x.clientId === r.body.clientId));
  });
});

describe('exchange: bad input', () => {
  test('wrong secret, unknown client id and malformed ids are the same 401', async () => {
    const created = await tenantToken('acme');
    for (const [id, secret] of [
      [created.clientId, 'wrong'],
      ['00000000-0000-4000-8000-000000000000', created.secret],
      ['not-a-uuid', 'x'],
    ]) {
      const r = await exchange(id, secret);
      assert.equal(r.status, 401);
      assert.equal(r.body.errorCode, 'GH-20005');
    }
    const missing = await t.call('POST', EXCHANGE, { body: { clientId: created.clientId } });
    assert.equal(missing.status, 400);
  });

  test('an expired token cannot sign in, refresh, or call', async () => {
    const created = await tenantToken('acme', { roleIds: [roleIds['read-only']], expiresInMinutes: 60 });
    assert.ok(Date.parse(String(created.expires)) > Date.now() + 59 * 60_000);
    const s = await signIn(created.clientId, created.secret);
    await t.db.query("UPDATE api_tokens SET expires_at = now() - interval '1 second' WHERE id = $1", [
      created.clientId,
    ]);
    const r = await exchange(created.clientId, created.secret);
    assert.equal(r.status, 401);
    assert.equal(r.body.errorCode, 'GH-64005');
    assert.equal((await refresh(s.refresh_token)).status, 401);
    assert.equal((await t.call('GET', USERS, { token: s.access_token })).status, 401);
  });

  test('a token of a removed account stops working at once', async () => {
    const created = await tenantToken('doomed', { roleIds: [roleIds['read-only']] });
    const s = await signIn(created.clientId, created.secret);
    assert.equal((await t.call('GET', USERS, { token: s.access_token })).status, 200);
    const del = await t.call('DELETE', '/tenants/resources/tenants/v1/doomed', { token: vendor });
    assert.equal(del.status, 200);
    const call = await t.call('GET', USERS, { token: s.access_token });
    assert.equal(call.status, 401);
    assert.equal(call.body.errorCode, 'GH-64011');
    assert.equal((await exchange(created.clientId, created.secret)).status, 401);
    assert.equal((await refresh(s.refresh_token)).status, 401);
  });

  test('the environment setting disables API tokens: 403 with a clear error, and back', async () => {
    const created = await tenantToken('acme', { roleIds: [roleIds['read-only']] });
    const s = await signIn(created.clientId, created.secret);
    const off = await t.call('POST', CONFIG, { token: vendor, body: { apiTokensEnabled: false } });
    assert.equal(off.status, 201);
    try {
      for (const r of [
        await exchange(created.clientId, created.secret),
        await refresh(s.refresh_token),
        await t.call('GET', USERS, { token: s.access_token }),
        await t.call('POST', TENANT_TOKENS, { token: vendor, body: {}, headers: H('acme') }),
      ]) {
        assert.equal(r.status, 403, JSON.stringify(r.body));
        assert.equal(r.body.errorCode, 'GH-64001');
        assert.match(r.body.errors[0], /disabled/);
      }
    } finally {
      await t.call('POST', CONFIG, { token: vendor, body: { apiTokensEnabled: true } });
    }
    assert.equal((await refresh(s.refresh_token)).status, 200, 'a refused refresh does not consume the token');
  });
});

describe('refresh', () => {
  test('rotates: the new pair works, the used refresh token is refused', async () => {
    const created = await tenantToken('acme', { roleIds: [roleIds['read-only']] });
    const s = await signIn(created.clientId, created.secret);
    const r1 = await refresh(s.refresh_token);
    assert.equal(r1.status, 200, JSON.stringify(r1.body));
    assert.notEqual(r1.body.refresh_token, s.refresh_token);
    assert.equal(claims(r1.body.access_token).type, 'tenantApiToken');
    assert.equal((await t.call('GET', USERS, { token: r1.body.access_token })).status, 200);
    const replay = await refresh(s.refresh_token);
    assert.equal(replay.status, 401);
    assert.equal(replay.body.errorCode, 'GH-64004');
    assert.equal((await refresh(r1.body.refresh_token)).status, 200);
    assert.equal((await refresh('garbage')).status, 401);
  });

  test('at most 100 live refresh tokens per API token: the oldest goes', async () => {
    const created = await tenantToken('acme');
    const first = await signIn(created.clientId, created.secret);
    let last = first;
    for (let i = 0; i < 100; i++) last = await signIn(created.clientId, created.secret);
    const { rows } = await t.db.query<any>(
      'SELECT count(*)::int AS n FROM api_token_refresh_tokens WHERE api_token_id = $1',
      [created.clientId],
    );
    assert.equal(rows[0].n, 100);
    assert.equal((await refresh(first.refresh_token)).status, 401, 'the 101st exchange dropped the first');
    assert.equal((await refresh(last.refresh_token)).status, 200);
  });
});

describe('management', () => {
  test('update changes description, metadata, roles and permissions; the next exchange carries them', async () => {
    const created = await tenantToken('acme', { roleIds: [roleIds['read-only']] });
    const r = await t.call('PATCH', `${TENANT_TOKENS}/${created.clientId}`, {
      token: vendor,
      headers: H('acme'),
      body: {
        description: 'renamed',
        metadata: { a: 1 },
        roleIds: [],
        permissionIds: [permIds['fe.secure.write.users']],
      },
    });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.equal(r.body.description, 'renamed');
    assert.deepEqual(r.body.metadata, { a: 1 });
    assert.deepEqual(r.body.roleIds, []);
    assert.deepEqual(r.body.permissionIds, [permIds['fe.secure.write.users']]);
    assert.equal(r.body.secret, undefined);
    const c = claims((await signIn(created.clientId, created.secret)).access_token);
    assert.deepEqual(c.roles, []);
    assert.deepEqual(c.permissions, ['fe.secure.write.users']);
  });

  test('unknown ids: 404 for the token, 400 naming role and permission ids', async () => {
    const created = await tenantToken('acme');
    const nobody = '00000000-0000-4000-8000-000000000000';
    assert.equal(
      (
        await t.call('PATCH', `${TENANT_TOKENS}/${nobody}`, {
          token: vendor,
          headers: H('acme'),
          body: { description: 'x' },
        })
      ).status,
      404,
    );
    assert.equal((await t.call('DELETE', `${TENANT_TOKENS}/nope`, { token: vendor, headers: H('acme') })).status, 404);
    const other = await t.call('DELETE', `${TENANT_TOKENS}/${created.clientId}`, {
      token: vendor,
      headers: H('globex'),
    });
    assert.equal(other.status, 404, 'another account cannot delete it');
    const badRole = await t.call('POST', TENANT_TOKENS, {
      token: vendor,
      headers: H('acme'),
      body: { roleIds: [nobody] },
    });
    assert.equal(badRole.status, 400);
    assert.equal(badRole.body.errorCode, 'GH-40007');
    const badPerm = await t.call('POST', TENANT_TOKENS, {
      token: vendor,
      headers: H('acme'),
      body: { permissionIds: [nobody] },
    });
    assert.equal(badPerm.status, 400);
    assert.deepEqual(badPerm.body.context.ids, [nobody]);
    const noAccount = await t.call('POST', TENANT_TOKENS, { token: vendor, headers: H('nowhere'), body: {} });
    assert.equal(noAccount.status, 404);
    const noHeader = await t.call('POST', TENANT_TOKENS, { token: vendor, body: {} });
    assert.equal(noHeader.status, 400);
    const { rows } = await t.db.query<any>("SELECT count(*)::int AS n FROM api_tokens WHERE tenant_id = 'nowhere'");
    assert.equal(rows[0].n, 0);
  });

  test("an admin manages the account's tokens with a user token; createdByUserId is the admin; permissions are checked", async () => {
    const alice = (await signedIn(t, { email: 'alice@acme.test' })).accessToken;
    const created = await tenantToken('globex', { description: 'by alice' }, alice); // header ignored for user tokens
    assert.equal(created.tenantId, 'acme');
    assert.equal(created.createdByUserId, claims(alice).sub);
    const bob = (await signedIn(t, { email: 'bob@acme.test' })).accessToken; // read-only: may list, not create or delete
    assert.equal((await t.call('GET', TENANT_TOKENS, { token: bob })).status, 200);
    const denied = await t.call('POST', TENANT_TOKENS, { token: bob, body: {} });
    assert.equal(denied.status, 403);
    assert.equal(denied.body.errorCode, 'GH-20004');
    assert.equal((await t.call('DELETE', `${TENANT_TOKENS}/${created.clientId}`, { token: bob })).status, 403);
    assert.equal((await t.call('DELETE', `${TENANT_TOKENS}/${created.clientId}`, { token: alice })).status, 200);
  });

  test('a creator cannot grant a token more than they hold', async () => {
    const limited = await t.userToken({
      sub: '11111111-1111-4111-8111-111111111111',
      tenantId: 'acme',
      permissions: ['fe.secure.write.tenantApiTokens', 'fe.secure.read.users'],
    });
    const viaRole = await t.call('POST', TENANT_TOKENS, { token: limited, body: { roleIds: [roleIds.admin] } });
    assert.equal(viaRole.status, 403);
    assert.equal(viaRole.body.errorCode, 'GH-20020'); // the roles module's grant rule
    const viaPerm = await t.call('POST', TENANT_TOKENS, {
      token: limited,
      body: { permissionIds: [permIds['fe.secure.write.users']] },
    });
    assert.equal(viaPerm.status, 403);
    const ok = await t.call('POST', TENANT_TOKENS, {
      token: limited,
      body: { permissionIds: [permIds['fe.secure.read.users']] },
    });
    assert.equal(ok.status, 201, JSON.stringify(ok.body));
    const patch = await t.call('PATCH', `${TENANT_TOKENS}/${ok.body.clientId}`, {
      token: limited,
      body: { roleIds: [roleIds.admin] },
    });
    assert.equal(patch.status, 403);
  });
});

describe('user (personal) API tokens', () => {
  test("a user creates one; it acts as the user with the user's permissions, narrowed by permissionIds", async () => {
    const alice = (await signedIn(t, { email: 'alice@acme.test' })).accessToken;
    const aliceId = claims(alice).sub;
    const full = await t.call('POST', USER_TOKENS, {
      token: alice,
      body: { description: 'cli', metadata: { k: 'v' } },
    });
    assert.equal(full.status, 201, JSON.stringify(full.body));
    assert.ok(full.body.secret);
    const s = await signIn(full.body.clientId, full.body.secret);
    const c = claims(s.access_token);
    assert.equal(c.type, 'userApiToken');
    assert.equal(c.userId, aliceId);
    assert.equal(c.tenantId, 'acme');
    assert.deepEqual(c.roles, ['admin']);
    assert.ok(c.permissions.includes('fe.secure.write.users'));
    const me = await t.call('GET', `/identity/resources/users/v1/${aliceId}`, { token: s.access_token });
    assert.equal(me.status, 200);

    const narrow = await t.call('POST', USER_TOKENS, {
      token: alice,
      body: { permissionIds: [permIds['fe.secure.read.users']] },
    });
    assert.equal(narrow.status, 201);
    assert.deepEqual(claims((await signIn(narrow.body.clientId, narrow.body.secret)).access_token).permissions, [
      'fe.secure.read.users',
    ]);

    const list = await t.call('GET', USER_TOKENS, { token: alice });
    assert.deepEqual(list.body.map((x: any) => x.clientId).sort(), [full.body.clientId, narrow.body.clientId].sort());
    assert.ok(list.body.every((x: any) => x.secret === undefined));
    assert.equal((await t.call('DELETE', `${USER_TOKENS}/${narrow.body.clientId}`, { token: alice })).status, 200);
    assert.equal((await exchange(narrow.body.clientId, narrow.body.secret)).status, 401);
  });

  test('a user cannot put in permissions they do not hold', async () => {
    const bob = (await signedIn(t, { email: 'bob@acme.test' })).accessToken;
    const r = await t.call('POST', USER_TOKENS, {
      token: bob,
      body: { permissionIds: [permIds['fe.secure.write.users']] },
    });
    assert.equal(r.status, 403);
    assert.equal(r.body.errorCode, 'GH-64006');
  });

  test('vendor calls name the user with headers; a missing header is a 400; a non-member is a 404', async () => {
    const gina = (await t.call('GET', USERS, { token: vendor, headers: H('globex') })).body.items[0].id;
    const ok = await t.call('POST', USER_TOKENS, {
      token: vendor,
      body: {},
      headers: H('globex', { 'gatehouse-user-id': gina }),
    });
    assert.equal(ok.status, 201);
    const list = await t.call('GET', USER_TOKENS, {
      token: vendor,
      headers: H('globex', { 'gatehouse-user-id': gina }),
    });
    assert.equal(list.body.length, 1);
    const noUser = await t.call('POST', USER_TOKENS, { token: vendor, body: {}, headers: H('globex') });
    assert.equal(noUser.status, 400);
    assert.equal(noUser.body.errorCode, 'GH-64009');
    const notMember = await t.call('POST', USER_TOKENS, {
      token: vendor,
      body: {},
      headers: H('acme', { 'gatehouse-user-id': gina }),
    });
    assert.equal(notMember.status, 404);
  });

  test('a machine token cannot manage personal tokens', async () => {
    const created = await tenantToken('acme', { roleIds: [roleIds.admin] });
    const s = await signIn(created.clientId, created.secret);
    const r = await t.call('POST', USER_TOKENS, { token: s.access_token, body: {} });
    assert.equal(r.status, 403);
    assert.equal(r.body.errorCode, 'GH-20010', "personal tokens are an identity change: the user's own session only");
  });

  test('a user API token stops working when its user is deleted or leaves the account', async () => {
    const carol = (await user(t, 'acme', { email: 'carol@acme.test' })).id;
    const made = await t.call('POST', USER_TOKENS, {
      token: vendor,
      body: {},
      headers: H('acme', { 'gatehouse-user-id': carol }),
    });
    assert.equal(made.status, 201);
    const s = await signIn(made.body.clientId, made.body.secret);
    assert.equal((await t.call('GET', USERS, { token: s.access_token })).status, 200);
    assert.equal((await t.call('DELETE', `/identity/resources/users/v1/${carol}`, { token: vendor })).status, 200);
    const call = await t.call('GET', USERS, { token: s.access_token });
    assert.equal(call.status, 401);
    assert.equal(call.body.errorCode, 'GH-64011');
    assert.equal((await exchange(made.body.clientId, made.body.secret)).status, 401);
    assert.equal((await refresh(s.refresh_token)).status, 401);

    const dave = (await user(t, 'acme', { email: 'dave@acme.test' })).id;
    assert.equal(
      (
        await t.call('POST', `/identity/resources/users/v1/${dave}/tenant`, {
          token: vendor,
          body: { tenantId: 'globex' },
        })
      ).status,
      201,
    );
    const his = await t.call('POST', USER_TOKENS, {
      token: vendor,
      body: {},
      headers: H('acme', { 'gatehouse-user-id': dave }),
    });
    const d = await signIn(his.body.clientId, his.body.secret);
    assert.equal(
      (await t.call('DELETE', `/identity/resources/users/v1/${dave}`, { token: vendor, headers: H('acme') })).status,
      200,
    );
    assert.equal(
      (await t.call('GET', `/identity/resources/vendor-only/users/v1/${dave}`, { token: vendor })).status,
      200,
      'dave still exists in globex',
    );
    assert.equal((await t.call('GET', USERS, { token: d.access_token })).status, 401, 'but his acme token is gone');
    assert.equal((await exchange(his.body.clientId, his.body.secret)).status, 401);
  });
});
