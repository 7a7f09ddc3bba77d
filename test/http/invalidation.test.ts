import assert from 'node:assert/strict';
import { generateKeyPair, SignJWT } from 'jose';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { PASSWORD, account, user } from '../fixtures/builders.ts';
import { openTestDb } from '../helpers/db.ts';
import { startTestApp, type TestApp } from '../helpers/harness.ts';
import type { ClosableDb } from '../../src/storage/db.ts';

/**
 * Two instances on one database: a change made through one is enforced by the other within 1 s (LISTEN/NOTIFY), before
 * the cache's time-to-live could have expired it. Each case primes instance two's cache right before the change, so
 * enforcement seen earlier than `primed + TTL` can only come from the notification.
 */

const A = '/identity/resources/auth/v1';
const CONF = '/identity/resources/configurations/v1';
const hdr = (tenantId: string) => ({ 'gatehouse-tenant-id': tenantId });
const claims = (token: string) => JSON.parse(Buffer.from(token.split('.')[1], 'base64url').toString());
const onPostgres = Boolean(process.env.TEST_DATABASE_URL);

/** Polls `check` for up to 1 s; answers how long after `since` it first held (throws when it never did). */
async function within1s(since: number, check: () => Promise<boolean>, what: string): Promise<number> {
  const deadline = Date.now() + 1000;
  for (;;) {
    if (await check()) return Date.now() - since;
    if (Date.now() > deadline) throw new Error(`${what}: not seen by instance two within 1 s`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** Waits out a cache's TTL, so that the priming read that follows loads a fresh entry (it expires at prime + TTL). */
const expire = (ttlMs: number) => new Promise((r) => setTimeout(r, ttlMs + 50));

/** The enforcement came before the TTL could have expired the entry primed at `primedAt`. */
function beforeTtl(primedAt: number, ttlMs: number, what: string): void {
  assert.ok(
    Date.now() < primedAt + ttlMs,
    `${what}: seen only ${Date.now() - primedAt} ms after priming (TTL ${ttlMs})`,
  );
}

describe('cache invalidation across two instances on one database', () => {
  let db: ClosableDb;
  let one: TestApp;
  let two: TestApp;
  let vendorOne: string;
  let vendorTwo: string;
  // A long unknown-kid window: a key seen by instance two came from the notification, not from a token naming it.
  // No periodic key reload during the run either.
  const env = { SIGNING_KEYS_UNKNOWN_KID_RELOAD_MS: '600000', SIGNING_KEYS_RELOAD_MS: '600000' };
  const signIn = (t: TestApp, email: string, remoteAddress = '203.0.113.5') =>
    t.call('POST', `${A}/user`, { body: { email, password: PASSWORD }, remoteAddress });

  before(async () => {
    db = await openTestDb();
    one = await startTestApp(env, { db });
    two = await startTestApp(env, { db });
    vendorOne = await one.vendorToken();
    vendorTwo = await two.vendorToken();
    await account(one, { id: 'inv-acme' });
    await user(one, 'inv-acme', { email: 'ada@inv.test' }); // first user: admin
    await user(one, 'inv-acme', { email: 'bob@inv.test' });
    assert.ok(one.ctx.invalidation.connected && two.ctx.invalidation.connected, 'both instances listen');
  });
  after(async () => {
    await one?.close();
    await two?.close();
    await db?.close();
  });

  test('a vendor credential revoked through one is refused by two (credential cache 5 s)', async () => {
    const c = await one.call('POST', '/auth/vendor/credentials', { token: vendorOne, body: { description: 'ci' } });
    assert.equal(c.status, 201, JSON.stringify(c.body));
    const ex = await two.call('POST', '/auth/vendor', { body: { clientId: c.body.clientId, secret: c.body.secret } });
    const token = ex.body.token as string;
    const use = () => two.call('GET', '/auth/vendor/credentials', { token });
    const primed = Date.now();
    assert.equal((await use()).status, 200);
    assert.equal((await one.call('DELETE', `/auth/vendor/credentials/${c.body.id}`, { token: vendorOne })).status, 204);
    await within1s(primed, async () => (await use()).status === 401, 'revoked credential');
    beforeTtl(primed, 5000, 'revoked credential');
  });

  test('an API token deleted through one is refused by two at once (no cache)', async () => {
    const T = '/identity/resources/tenants/api-tokens/v1';
    const created = await one.call('POST', T, { token: vendorOne, body: {}, headers: hdr('inv-acme') });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    const ex = await two.call('POST', '/identity/resources/auth/v2/api-token', {
      body: { clientId: created.body.clientId, secret: created.body.secret },
    });
    assert.equal(ex.status, 200, JSON.stringify(ex.body));
    const use = () => two.call('GET', '/identity/resources/users/v2/me', { token: ex.body.access_token });
    const before = (await use()).status;
    assert.notEqual(before, 401);
    const del = await one.call('DELETE', `${T}/${created.body.clientId}`, {
      token: vendorOne,
      headers: hdr('inv-acme'),
    });
    assert.equal(del.status, 200, JSON.stringify(del.body));
    assert.equal((await use()).status, 401);
  });

  test('a SCIM token rotated through one stops working on two (SCIM auth cache 2 s)', async () => {
    const C = '/directory/resources/v1/configurations/scim2';
    const c = await one.call('POST', C, {
      token: vendorOne,
      body: { source: 'okta', connectionName: 'Okta' },
      headers: hdr('inv-acme'),
    });
    assert.equal(c.status, 201, JSON.stringify(c.body));
    const scim = () =>
      two.app.inject({
        method: 'GET',
        url: `/directory/resources/scim/v2.0/${c.body.id}/Users`,
        headers: { authorization: `Bearer ${c.body.token}` },
      });
    const primed = Date.now();
    assert.equal((await scim()).statusCode, 200);
    const r = await one.call('POST', `${C}/${c.body.id}/token`, { token: vendorOne, headers: hdr('inv-acme') });
    assert.equal(r.status, 200);
    await within1s(primed, async () => (await scim()).statusCode === 401, 'rotated SCIM token');
    beforeTtl(primed, 2000, 'rotated SCIM token');
  });

  test('an IP allow list activated through one is enforced by two (IP gate cache 2 s)', async () => {
    const IP = `${CONF}/restrictions/ip`;
    // The administrator signs in from the office first: the allow list must admit an administrator's address.
    assert.equal((await signIn(two, 'ada@inv.test', '203.0.113.5')).status, 200);
    await expire(2000);
    const primed = Date.now();
    assert.equal((await signIn(two, 'bob@inv.test', '192.0.2.10')).status, 200);
    const rule = await one.call('POST', IP, {
      token: vendorOne,
      body: { ip: '203.0.113.0/24', strategy: 'ALLOW' },
      headers: hdr('inv-acme'),
    });
    assert.equal(rule.status, 201, JSON.stringify(rule.body));
    const cfg = await one.call('POST', `${IP}/config`, {
      token: vendorOne,
      body: { strategy: 'ALLOW', isActive: true },
      headers: hdr('inv-acme'),
    });
    assert.ok(cfg.status < 300, JSON.stringify(cfg.body));
    await within1s(primed, async () => (await signIn(two, 'bob@inv.test', '192.0.2.10')).status === 403, 'allow list');
    beforeTtl(primed, 2000, 'allow list');
    assert.equal((await signIn(two, 'bob@inv.test', '203.0.113.9')).status, 200, 'the office still signs in');
    await one.call('POST', `${IP}/config`, { token: vendorOne, body: { isActive: false }, headers: hdr('inv-acme') });
  });

  test('a setting changed through one applies on two (settings and branding caches 5 s)', async () => {
    await expire(5000);
    const primed = Date.now();
    const first = await signIn(two, 'bob@inv.test');
    assert.equal(first.body.expiresIn, 300);
    const brandingName = async () => (await two.call('GET', `${CONF}/branding`)).body.name;
    assert.equal(await brandingName(), 'Gatehouse');
    const r = await one.call('POST', CONF, { token: vendorOne, body: { defaultTokenExpiration: 900 } });
    assert.equal(r.status, 201, JSON.stringify(r.body));
    await within1s(primed, async () => (await signIn(two, 'bob@inv.test')).body.expiresIn === 900, 'token lifetime');
    beforeTtl(primed, 5000, 'token lifetime');
    const put = await one.call('PUT', `${CONF}/branding`, { token: vendorOne, body: { name: 'Acme' } });
    assert.equal(put.status, 200, JSON.stringify(put.body));
    await within1s(primed, async () => (await brandingName()) === 'Acme', 'branding');
    beforeTtl(primed, 5000, 'branding');
  });

  test('a security policy changed through one applies on two (MFA policy cache 2 s)', async () => {
    await expire(2000);
    const primed = Date.now();
    const first = await signIn(two, 'bob@inv.test');
    assert.ok(first.body.accessToken, JSON.stringify(first.body));
    const p = await one.call('PUT', `${CONF}/mfa-policy`, {
      token: vendorOne,
      body: { enforceMFAType: 'Force' },
      headers: hdr('inv-acme'),
    });
    assert.equal(p.status, 200, JSON.stringify(p.body));
    await within1s(primed, async () => (await signIn(two, 'bob@inv.test')).body.mfaRequired === true, 'MFA policy');
    beforeTtl(primed, 2000, 'MFA policy');
    await one.call('PUT', `${CONF}/mfa-policy`, {
      token: vendorOne,
      body: { enforceMFAType: 'DontForce' },
      headers: hdr('inv-acme'),
    });
  });

  test('a key rotated through one is in the JWKS of two and verifies there (key cache 60 s)', async () => {
    const kids = async () =>
      ((await two.call('GET', '/.well-known/jwks.json')).body.keys as { kid: string }[]).map((k) => k.kid);
    const reloads = two.ctx.keys.reloads;
    const primed = Date.now();
    const r = await one.call('POST', `${CONF}/signing-keys/rotate`, { token: vendorOne, body: {} });
    assert.equal(r.status, 201, JSON.stringify(r.body));
    await within1s(primed, async () => (await kids()).includes(r.body.kid), 'new signing key');
    assert.ok(two.ctx.keys.reloads > reloads, 'two reloaded its keys');
    const s = await signIn(one, 'ada@inv.test');
    assert.equal(claims(s.body.accessToken).tenantId, 'inv-acme');
    const me = await two.call('GET', '/identity/resources/users/v2/me', { token: s.body.accessToken });
    assert.equal(me.status, 200, JSON.stringify(me.body));
  });

  test('an account created through one is in the account list of two at once (list cache checks the data version)', async () => {
    // `in` is too short for the trigram index: the list of its matches is served from instance two's id cache.
    const ids = async (q: string) =>
      (
        (await two.call('GET', `/tenants/resources/tenants/v2?_limit=200${q}`, { token: vendorTwo })).body.items as {
          tenantId: string;
        }[]
      ).map((a) => a.tenantId);
    for (const q of ['', '&_filter=in']) assert.ok(!(await ids(q)).includes('inv-new'), q);
    await account(one, { id: 'inv-new' });
    for (const q of ['', '&_filter=in']) assert.ok((await ids(q)).includes('inv-new'), q);
  });

  test('a rolled-back write notifies nobody; a committed one reaches two', async () => {
    const J = '/identity/resources/jwt-templates/v1';
    const body = { key: 'inv-tpl', name: 'T', algorithm: 'RS256', expiration: 300, templateSchema: { claims: {} } };
    const committed = two.ctx.invalidation.received;
    const ok = await one.call('POST', J, { token: vendorOne, body });
    assert.ok(ok.status < 300, JSON.stringify(ok.body));
    await within1s(Date.now(), async () => two.ctx.invalidation.received > committed, 'committed template');
    const received = two.ctx.invalidation.received;
    const dup = await one.call('POST', J, { token: vendorOne, body });
    assert.equal(dup.status, 409, JSON.stringify(dup.body));
    await new Promise((r) => setTimeout(r, 200));
    assert.equal(two.ctx.invalidation.received, received, 'no notification for the rolled-back insert');
  });

  test('a kid not in the keys reloads at most once per window; the others are refused without a key read', async () => {
    const s = await signIn(two, 'ada@inv.test');
    const { privateKey } = await generateKeyPair('RS256');
    const forge = (kid: string) =>
      new SignJWT(claims(s.body.accessToken)).setProtectedHeader({ alg: 'RS256', kid }).sign(privateKey);
    const reloads = two.ctx.keys.reloads;
    for (let i = 0; i < 20; i++) {
      const r = await two.call('GET', '/identity/resources/users/v2/me', { token: await forge(randomUUID()) });
      assert.equal(r.status, 401);
    }
    assert.ok(two.ctx.keys.reloads - reloads <= 1, `${two.ctx.keys.reloads - reloads} reloads for 20 unknown kids`);
  });

  test('the listener reconnects after its connection is killed, and changes arrive again', {
    skip: !onPostgres && 'PGlite listens in process: no connection to kill',
  }, async () => {
    const inv = two.ctx.invalidation;
    const pid = inv.listenerPid;
    assert.ok(pid, 'the listener has a backend pid');
    await db.query('SELECT pg_terminate_backend($1)', [pid]);
    const deadline = Date.now() + 5000;
    while (!(inv.connected && inv.listenerPid !== pid) && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 20));
    assert.ok(inv.connected && inv.listenerPid !== pid, 'reconnected on a new connection');
    const brandingName = async () => (await two.call('GET', `${CONF}/branding`)).body.name;
    const primed = Date.now();
    await brandingName();
    await one.call('PUT', `${CONF}/branding`, { token: vendorOne, body: { name: 'After reconnect' } });
    await within1s(primed, async () => (await brandingName()) === 'After reconnect', 'branding after reconnect');
    beforeTtl(primed, 5000, 'branding after reconnect');
  });
});
