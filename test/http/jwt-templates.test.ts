import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Authenticator } from '../helpers/authenticator.ts';
import { startTestApp, type TestApp } from '../helpers/harness.ts';
import { account, signedIn, user } from '../fixtures/builders.ts';

/**
 * JWT templates and their targeting rules: CRUD and validation through HTTP, and their effect on user access tokens
 * (claims, lifetime, kept on refresh); step-up with an authenticator code raises the session's acr.
 */

const T = '/identity/resources/jwt-templates/v1';
const G = '/identity/resources/configurations/v1/jwt-template-targeting';
const REFRESH = '/identity/resources/auth/v1/user/token/refresh';
const STEP_UP = '/identity/resources/auth/v1/user/step-up/generate';
const ACR_MFA = 'http://schemas.openid.net/pape/policies/2007/06/multi-factor';
const claims = (token: string) => JSON.parse(Buffer.from(token.split('.')[1], 'base64url').toString());

let t: TestApp;
let vendor: string;
const call = (method: string, url: string, body?: unknown) =>
  t.call(method, url, { token: vendor, ...(body === undefined ? {} : { body }) });
const template = (key: string, o: Record<string, unknown> = {}) => ({
  key,
  name: `Template ${key}`,
  expiration: 900,
  algorithm: 'RS256',
  templateSchema: { claims: { plan: '{{user.metadata.plan}}' } },
  ...o,
});
async function total(): Promise<number> {
  const r = await call('GET', T);
  assert.equal(r.status, 200);
  return r.body._metadata.totalItems;
}

before(async () => {
  t = await startTestApp();
  vendor = await t.vendorToken();
});
after(async () => t?.close());

describe('JWT templates: CRUD and validation', () => {
  test('create, read, list, update, delete', async () => {
    const c = await call('POST', T, template('crud-a', { description: 'first' }));
    assert.equal(c.status, 201, JSON.stringify(c.body));
    assert.equal(c.body.key, 'crud-a');
    assert.equal(c.body.description, 'first');
    assert.equal(c.body.expiration, 900);
    assert.equal(c.body.algorithm, 'RS256');
    assert.ok(c.body.vendorId);
    assert.deepEqual(c.body.templateSchema, { claims: { plan: '{{user.metadata.plan}}' } });
    assert.ok((await call('POST', T, template('crud-b'))).status === 201);

    const one = await call('GET', `${T}/${c.body.id}`);
    assert.equal(one.status, 200);
    assert.deepEqual(one.body, c.body);
    assert.equal((await call('GET', `${T}/00000000-0000-4000-8000-000000000000`)).status, 404);
    assert.equal((await call('GET', `${T}/not-an-id`)).status, 404);

    const byKey = await call('GET', `${T}?keys=crud-b&_sortBy=key&_order=DESC`);
    assert.equal(byKey.status, 200);
    assert.deepEqual(
      byKey.body.items.map((i: any) => i.key),
      ['crud-b'],
    );
    const paged = await call('GET', `${T}?_limit=1&_offset=0&_sortBy=key&_order=ASC&keys=crud-a&keys=crud-b`);
    assert.equal(paged.body.items[0].key, 'crud-a');
    assert.deepEqual(paged.body._metadata, { totalItems: 2, totalPages: 2 });
    assert.match(paged.body._links.next, /_offset=1/);
    const next = await call('GET', paged.body._links.next);
    assert.deepEqual(
      next.body.items.map((i: any) => i.key),
      ['crud-b'],
      'the link keeps the repeated keys',
    );
    assert.equal(paged.body._links.prev, '');

    const u = await call('PUT', `${T}/${c.body.id}`, { name: 'Renamed', expiration: 120 });
    assert.equal(u.status, 200, JSON.stringify(u.body));
    assert.equal(u.body.name, 'Renamed');
    assert.equal(u.body.expiration, 120);
    assert.equal(u.body.key, 'crud-a', 'omitted fields keep their value');

    const d = await call('DELETE', `${T}/${c.body.id}`);
    assert.equal(d.status, 204);
    assert.equal((await call('GET', `${T}/${c.body.id}`)).status, 404);
    assert.equal((await call('DELETE', `${T}/${c.body.id}`)).status, 404);
  });

  test('refused input: 4xx with the wire body, nothing stored or changed', async () => {
    const before = await total();
    const cases: [Record<string, unknown>, number, RegExp][] = [
      [template('crud-b'), 409, /key/],
      [template('hs', { algorithm: 'HS256' }), 400, /RS256/],
      [template('alg', { algorithm: 'ES512' }), 400, /algorithm/],
      [template('exp0', { expiration: 0 }), 400, /expiration/],
      [template('exp-big', { expiration: 86_401 }), 400, /expiration/],
      [template('exp-frac', { expiration: 1.5 }), 400, /expiration/],
      [template('sub', { templateSchema: { claims: { sub: 'someone-else' } } }), 400, /"sub"/],
      [template('tid', { templateSchema: { claims: { tenantId: '{{user.email}}' } } }), 400, /"tenantId"/],
      [template('acr', { templateSchema: { claims: { acr: 'strong' } } }), 400, /"acr"/],
      [template('roles', { templateSchema: { claims: { roles: ['admin'] } } }), 400, /"roles"/],
      [template('ref', { templateSchema: { claims: { x: '{{user.password}}' } } }), 400, /unknown reference/],
      [template('noclaims', { templateSchema: {} }), 400, /claims/],
      [template('bad key!'), 400, /key/],
    ];
    for (const [body, status, message] of cases) {
      const r = await call('POST', T, body);
      assert.equal(r.status, status, `${JSON.stringify(body)} → ${JSON.stringify(r.body)}`);
      assert.ok(Array.isArray(r.body.errors) && typeof r.body.errorCode === 'string', JSON.stringify(r.body));
      assert.match(r.body.errors.join(' '), message);
    }
    assert.equal(await total(), before);

    // The vendor's default template lists core claims with their own reference: accepted, and they stay the platform's.
    const copied = await call(
      'POST',
      T,
      template('vendor-default', { templateSchema: { claims: { sub: '{{sub}}', tenantId: '{{user.tenantId}}' } } }),
    );
    assert.equal(copied.status, 201, JSON.stringify(copied.body));

    const b = (await call('GET', `${T}?keys=crud-b`)).body.items[0];
    const bad = await call('PUT', `${T}/${b.id}`, { templateSchema: { claims: { exp: 1 } }, name: 'changed?' });
    assert.equal(bad.status, 400);
    assert.match(bad.body.errors[0], /"exp"/);
    const dup = await call('PUT', `${T}/${b.id}`, { key: 'vendor-default' });
    assert.equal(dup.status, 409);
    assert.deepEqual((await call('GET', `${T}/${b.id}`)).body, b, 'unchanged');
    assert.equal((await t.call('GET', T)).status, 401, 'a token is required');
  });
});

describe('targeting and tokens', () => {
  let acmeUser: { email: string; id: string };
  let vip: { email: string; id: string };
  let otherUser: { email: string; id: string };
  let gold: any;
  before(async () => {
    await account(t, { id: 'jwt-acme' });
    await account(t, { id: 'jwt-other' });
    acmeUser = await user(t, 'jwt-acme', { name: 'Ann', fields: { metadata: JSON.stringify({ plan: 'gold' }) } });
    vip = await user(t, 'jwt-acme', { email: 'boss@vip-jwt.test' });
    otherUser = await user(t, 'jwt-other');
    gold = (
      await call('POST', T, {
        ...template('gold', { expiration: 1234 }),
        templateSchema: {
          claims: {
            plan: '{{user.metadata.plan}}',
            contact: '{{user.email}}',
            greeting: 'hello {{user.name}} of {{user.tenantId}}',
            tier: 3,
            nested: { perms: '{{user.tenant.permissions}}', missing: '{{user.metadata.nope}}' },
            absent: '{{applicationId}}',
          },
        },
      })
    ).body;
    assert.ok(gold.id);
    assert.equal((await call('POST', T, template('vip', { expiration: 60 }))).status, 201);
  });

  test('targeting CRUD and validation', async () => {
    assert.equal((await call('GET', G)).status, 404);
    const unknown = await call('POST', G, { rules: [{ conditionLogic: 'and', conditions: [], treatment: 'nope' }] });
    assert.equal(unknown.status, 400);
    assert.match(unknown.body.errors[0], /rules\.0\.treatment.*nope/);
    const badAttr = await call('POST', G, {
      rules: [
        {
          conditionLogic: 'and',
          conditions: [{ attribute: 'ip', op: 'in_list', value: { list: ['x'] } }],
          treatment: 'gold',
        },
      ],
    });
    assert.equal(badAttr.status, 400);
    assert.match(badAttr.body.errors[0], /conditions\.0\.attribute/);
    const badValue = await call('POST', G, {
      rules: [
        { conditionLogic: 'and', conditions: [{ attribute: 'tenantId', op: 'in_list', value: {} }], treatment: 'gold' },
      ],
    });
    assert.equal(badValue.status, 400);
    assert.match(badValue.body.errors[0], /value/);
    const numericOp = await call('POST', G, {
      rules: [
        {
          conditionLogic: 'and',
          conditions: [{ attribute: 'tenantId', op: 'equal', value: { number: 1 } }],
          treatment: 'gold',
        },
      ],
    });
    assert.equal(numericOp.status, 400);
    assert.equal((await call('GET', G)).status, 404, 'nothing stored');

    const rules = [
      {
        conditionLogic: 'and',
        conditions: [{ attribute: 'email', op: 'ends_with', value: { list: ['@vip-jwt.test'] } }],
        treatment: 'vip',
      },
      {
        conditionLogic: 'and',
        conditions: [{ attribute: 'tenantId', op: 'in_list', value: { list: ['jwt-acme'] } }],
        treatment: 'gold',
      },
    ];
    const created = await call('POST', G, { rules: [rules[1]] });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    assert.equal(created.body.targeting.rules[0].treatment, 'gold');
    assert.equal((await call('POST', G, { rules })).status, 409);
    const put = await call('PUT', G, { rules: [rules[1]] });
    assert.equal(put.status, 200);
    assert.equal(put.body.id, created.body.id);
    assert.equal((await call('PATCH', `${G}/00000000-0000-4000-8000-000000000000`, { rules })).status, 404);
    const patched = await call('PATCH', `${G}/${created.body.id}`, { rules });
    assert.equal(patched.status, 200);
    assert.deepEqual(
      patched.body.targeting.rules.map((r: any) => r.treatment),
      ['vip', 'gold'],
    );
    assert.deepEqual((await call('GET', G)).body, patched.body);

    const inUse = await call('DELETE', `${T}/${gold.id}`);
    assert.equal(inUse.status, 409);
    assert.match(inUse.body.errors[0], /gold/);
    assert.equal((await call('PUT', `${T}/${gold.id}`, { key: 'gold-2' })).status, 409);
  });

  test('a targeted account gets the template claims and lifetime; another account does not; refresh keeps them', async () => {
    const s = await signedIn(t, acmeUser);
    const c = claims(s.accessToken);
    assert.equal(c.exp - c.iat, 1234);
    assert.equal(s.body.expiresIn, 1234);
    assert.equal(c.plan, 'gold');
    assert.equal(c.contact, acmeUser.email);
    assert.equal(c.greeting, 'hello Ann of jwt-acme');
    assert.equal(c.tier, 3);
    assert.deepEqual(c.nested, { perms: c.permissions });
    assert.ok(!('absent' in c), 'no application is known for a password sign-in');
    assert.equal(c.sub, acmeUser.id, 'core claims stay');
    assert.equal(c.tenantId, 'jwt-acme');
    assert.equal(c.type, 'userToken');

    const r = await t.call('POST', REFRESH, { body: { refreshToken: s.refreshToken } });
    assert.equal(r.status, 201, JSON.stringify(r.body));
    const rc = claims(r.body.accessToken);
    assert.equal(rc.plan, 'gold');
    assert.equal(rc.exp - rc.iat, 1234);

    // Rules are tried in order: the email rule comes first and chooses "vip" for this user of the same account.
    const v = claims((await signedIn(t, vip)).accessToken);
    assert.equal(v.exp - v.iat, 60);
    assert.equal(v.plan, undefined, 'vip has no plan in metadata');

    const o = claims((await signedIn(t, otherUser)).accessToken);
    assert.equal(o.exp - o.iat, 300, 'the default lifetime');
    assert.ok(!('plan' in o) && !('greeting' in o));

    // Without targeting, no template applies.
    const id = (await call('GET', G)).body.id;
    assert.equal((await call('DELETE', `${G}/${id}`)).status, 200);
    assert.equal((await call('DELETE', `${G}/${id}`)).status, 404);
    const plain = claims((await signedIn(t, acmeUser)).accessToken);
    assert.equal(plain.exp - plain.iat, 300);
    assert.ok(!('plan' in plain));
  });
});

describe('a flow that issues inside its transaction', () => {
  test('username sign-up: a rule without conditions applies to every token, read on a cache miss in the transaction', async () => {
    assert.equal((await call('POST', '/identity/resources/configurations/v1', { allowSignups: true })).status, 201);
    const put = await call('PUT', G, { rules: [{ conditionLogic: 'and', conditions: [], treatment: 'vip' }] });
    assert.equal(put.status, 200, JSON.stringify(put.body));
    const r = await t.call('POST', '/identity/resources/users/v1/signUp/username', {
      body: { provider: 'local', username: 'jwt.solo', password: 'correct horse battery staple', companyName: 'Solo' },
    });
    assert.equal(r.status, 201, JSON.stringify(r.body));
    const c = claims(r.body.authResponse.accessToken);
    assert.equal(c.exp - c.iat, 60);
    assert.equal(r.body.authResponse.expiresIn, 60);
    assert.equal((await call('DELETE', `${G}/${put.body.id}`)).status, 200);
  });
});

describe('step-up', () => {
  test('a code of the authenticator app raises acr to multi-factor and adds mfa and otp to amr', async () => {
    await account(t, { id: 'jwt-step' });
    const u = await user(t, 'jwt-step');
    // Signed in with the password only, before any second factor exists.
    const s = await signedIn(t, u);
    const before = claims(s.accessToken);
    assert.equal(before.acr, undefined);
    assert.ok(!before.amr.includes('mfa'));

    const H = { 'gatehouse-tenant-id': 'jwt-step', 'gatehouse-user-id': u.id };
    const e = await t.call('POST', '/identity/resources/users/v1/mfa/authenticator/enroll', {
      token: vendor,
      headers: H,
    });
    assert.equal(e.status, 200, JSON.stringify(e.body));
    const app = new Authenticator(new URL(e.body.uri).searchParams.get('secret')!);
    const v = await t.call('POST', '/identity/resources/users/v1/mfa/authenticator/enroll/verify', {
      token: vendor,
      headers: H,
      body: { token: await app.code() },
    });
    assert.equal(v.status, 200, JSON.stringify(v.body));

    const pwd = await t.call('POST', STEP_UP, { token: s.accessToken, body: { password: u.password } });
    assert.equal(pwd.status, 200, JSON.stringify(pwd.body));
    assert.equal(claims(pwd.body.accessToken).acr, undefined, 'a password is not a second factor');

    const step = await t.call('POST', STEP_UP, { token: pwd.body.accessToken, body: { code: await app.code() } });
    assert.equal(step.status, 200, JSON.stringify(step.body));
    const c = claims(step.body.accessToken);
    assert.equal(c.acr, ACR_MFA);
    assert.ok(c.amr.includes('mfa') && c.amr.includes('otp') && c.amr.includes('pwd'), JSON.stringify(c.amr));
    assert.equal(c.sid, before.sid);

    const r = await t.call('POST', REFRESH, { body: { refreshToken: step.body.refreshToken } });
    assert.equal(r.status, 201, JSON.stringify(r.body));
    assert.equal(claims(r.body.accessToken).acr, ACR_MFA, 'the session keeps the factor');
  });
});
