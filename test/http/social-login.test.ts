import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash, createPublicKey, randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { exportJWK, generateKeyPair, jwtVerify, SignJWT } from 'jose';
import { startTestApp, type TestApp } from '../helpers/harness.ts';
import { account, user } from '../fixtures/builders.ts';
import { startOidcIdp } from '../fixtures/sso/oidc-idp.ts';

/**
 * Social login against local servers that speak each provider's authorization, token and profile APIs (GitHub's
 * /user and /user/emails, Facebook's Graph /me, the OIDC userinfo of Google, Microsoft and Slack, Apple's ID token
 * with an ES256 client-secret JWT), and a custom provider served by a real OpenID provider (oidc-provider).
 */
const APP_CB = 'https://app.example/social/callback';
const APPLE_P8 = readFileSync(join(import.meta.dirname, '..', 'fixtures', 'sso', 'apple-key.p8'), 'utf8');
const OIDC_LIKE = new Set(['google', 'microsoft', 'slack', 'apple']);

interface Person {
  sub: string;
  email: string;
  verified: boolean;
  name: string;
}

/** One local server for all six providers, under /<provider>/... */
async function startProviders() {
  const people: Record<string, Person> = {};
  const codes = new Map<
    string,
    { p: string; clientId: string; redirectUri: string; challenge: string; nonce?: string }
  >();
  const tokens = new Map<string, { p: string; person: Person }>();
  const tweaks = {
    wrongNonce: false,
    githubEmails: undefined as undefined | { email: string; primary: boolean; verified: boolean }[],
  };
  // ID tokens are signed RS256 with a key published at /<provider>/jwks, as the real providers do.
  const { privateKey: idKey, publicKey } = await generateKeyPair('RS256');
  const jwks = { keys: [{ ...(await exportJWK(publicKey)), kid: 'local-1', alg: 'RS256', use: 'sig' }] };
  const body = (req: IncomingMessage) =>
    new Promise<string>((r) => {
      let s = '';
      req.on('data', (c) => (s += c));
      req.on('end', () => r(s));
    });
  const server: Server = createServer(async (req, res) => {
    const url = new URL(req.url!, 'http://x');
    const [, p, op] = url.pathname.split('/');
    const json = (status: number, v: unknown) => {
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(v));
    };
    if (op === 'jwks') return json(200, jwks);
    if (op === 'authorize') {
      const q = url.searchParams;
      if (q.get('code_challenge_method') !== 'S256' || !q.get('state')) return json(400, { error: 'invalid_request' });
      const code = randomUUID();
      codes.set(code, {
        p,
        clientId: q.get('client_id')!,
        redirectUri: q.get('redirect_uri')!,
        challenge: q.get('code_challenge')!,
        nonce: q.get('nonce') ?? undefined,
      });
      const back = new URL(q.get('redirect_uri')!);
      back.searchParams.set('code', code);
      back.searchParams.set('state', q.get('state')!);
      res.writeHead(302, { location: back.href });
      return res.end();
    }
    if (op === 'token') {
      const f = new URLSearchParams(await body(req));
      const c = codes.get(f.get('code') ?? '');
      codes.delete(f.get('code') ?? '');
      if (
        !c ||
        c.p !== p ||
        f.get('grant_type') !== 'authorization_code' ||
        f.get('redirect_uri') !== c.redirectUri ||
        f.get('client_id') !== c.clientId
      )
        return json(400, { error: 'invalid_grant' });
      if (
        createHash('sha256')
          .update(f.get('code_verifier') ?? '')
          .digest('base64url') !== c.challenge
      )
        return json(400, { error: 'invalid_grant', error_description: 'PKCE' });
      if (p === 'apple') {
        try {
          const { payload, protectedHeader } = await jwtVerify(f.get('client_secret')!, createPublicKey(APPLE_P8), {
            issuer: 'TEAM123456',
            subject: c.clientId,
          });
          assert.equal(protectedHeader.alg, 'ES256');
          assert.equal(protectedHeader.kid, 'KEY9876543');
          assert.ok(payload.aud);
        } catch {
          return json(401, { error: 'invalid_client' });
        }
      } else if (f.get('client_secret') !== `secret-${p}`) return json(401, { error: 'invalid_client' });
      const person = people[p];
      const accessToken = `at-${randomUUID()}`;
      tokens.set(accessToken, { p, person });
      const out: Record<string, unknown> = { access_token: accessToken, token_type: 'bearer' };
      if (OIDC_LIKE.has(p)) {
        out.id_token = await new SignJWT({
          nonce: tweaks.wrongNonce ? 'other' : c.nonce,
          email: person.email,
          email_verified: p === 'apple' ? String(person.verified) : person.verified,
          ...(p === 'microsoft' ? { xms_edov: person.verified } : {}),
        })
          .setProtectedHeader({ alg: 'RS256', kid: 'local-1' })
          .setIssuer(`https://${p}.example`)
          .setAudience(c.clientId)
          .setSubject(person.sub)
          .setIssuedAt()
          .setExpirationTime('5m')
          .sign(idKey);
      }
      return json(200, out);
    }
    const t = tokens.get((req.headers.authorization ?? '').replace(/^Bearer /, ''));
    if (!t || t.p !== p) return json(401, { error: 'invalid_token' });
    const u = t.person;
    if (op === 'userinfo') {
      if (p === 'slack')
        return json(200, { ok: true, sub: u.sub, email: u.email, email_verified: u.verified, name: u.name });
      if (p === 'microsoft') return json(200, { sub: u.sub, email: u.email, name: u.name });
      return json(200, {
        sub: u.sub,
        email: u.email,
        email_verified: u.verified,
        name: u.name,
        picture: `https://img.example/${u.sub}`,
      });
    }
    if (op === 'user')
      return json(200, {
        id: Number(u.sub.replace(/\D/g, '') || 7),
        login: u.name.toLowerCase(),
        name: u.name,
        email: null,
        avatar_url: 'https://avatars.example/1',
      });
    if (op === 'emails')
      return json(
        200,
        tweaks.githubEmails ?? [
          { email: `old-${u.email}`, primary: false, verified: false },
          { email: u.email, primary: true, verified: u.verified },
        ],
      );
    if (op === 'me') {
      if (url.searchParams.get('fields') !== 'id,name,email,picture')
        return json(400, { error: { message: 'fields' } });
      return json(200, {
        id: u.sub,
        name: u.name,
        ...(u.verified ? { email: u.email } : {}),
        picture: { data: { url: 'https://fb.example/p.jpg' } },
      });
    }
    json(404, {});
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { base, people, tweaks, close: () => new Promise<void>((r) => server.close(() => r())) };
}

describe('social login', () => {
  let t: TestApp;
  let vendor: string;
  let fake: Awaited<ReturnType<typeof startProviders>>;

  before(async () => {
    fake = await startProviders();
    t = await startTestApp();
    vendor = await t.vendorToken();
    await t.call('POST', '/identity/resources/configurations/v1', {
      token: vendor,
      body: { allowedRedirectUrls: [APP_CB], allowSignups: false },
    });
  });
  after(async () => {
    await t?.close();
    await fake?.close();
  });

  async function configure(p: string, extra: Record<string, unknown> = {}) {
    const b = fake.base;
    const openId = OIDC_LIKE.has(p) ? { issuer: `https://${p}.example`, jwksUrl: `${b}/${p}/jwks` } : {};
    const urls =
      p === 'github'
        ? { userInfoUrl: `${b}/github/user`, emailsUrl: `${b}/github/emails` }
        : p === 'facebook'
          ? { userInfoUrl: `${b}/facebook/me?fields=id,name,email,picture` }
          : p === 'apple'
            ? openId
            : { userInfoUrl: `${b}/${p}/userinfo`, ...openId };
    const r = await t.call('POST', '/identity/resources/sso/v2', {
      token: vendor,
      body: {
        type: p,
        clientId: `client-${p}`,
        secret: p === 'apple' ? APPLE_P8 : `secret-${p}`,
        redirectUrl: APP_CB,
        active: true,
        authorizationUrl: `${b}/${p}/authorize`,
        tokenUrl: `${b}/${p}/token`,
        ...urls,
        ...(p === 'apple' ? { teamId: 'TEAM123456', keyId: 'KEY9876543' } : {}),
        allowSignups: true,
        ...extra,
      },
    });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.equal(JSON.stringify(r.body).includes('secret-'), false);
    assert.equal(JSON.stringify(r.body).includes('PRIVATE KEY'), false);
    return r.body;
  }

  /** Plays the browser: prelogin, the provider's authorize redirect, then postlogin with code and state. */
  async function signIn(p: string) {
    const pre = await t.call('POST', `/identity/resources/auth/v1/user/sso/${p}/prelogin`, { body: {} });
    assert.equal(pre.status, 200, JSON.stringify(pre.body));
    const auth = new URL(pre.body.address);
    assert.equal(auth.searchParams.get('code_challenge_method'), 'S256');
    assert.equal(Boolean(auth.searchParams.get('nonce')), OIDC_LIKE.has(p), 'nonce only for OpenID providers');
    const res = await fetch(auth, { redirect: 'manual' });
    const back = new URL(res.headers.get('location')!);
    assert.ok(back.href.startsWith(APP_CB));
    return t.call('POST', `/identity/resources/auth/v1/user/sso/${p}/postlogin`, {
      body: { code: back.searchParams.get('code'), state: back.searchParams.get('state') },
    });
  }

  for (const p of ['google', 'github', 'facebook', 'microsoft', 'slack', 'apple']) {
    test(`${p}: real endpoints mapped, code + PKCE exchanged, profile mapped, new user signed up`, async () => {
      const cfg = await configure(p);
      assert.equal(cfg.type, p);
      fake.people[p] = { sub: `${p}-sub-42`, email: `new.${p}@social.test`, verified: true, name: `New ${p}` };
      const r = await signIn(p);
      assert.equal(r.status, 200, JSON.stringify(r.body));
      assert.ok(r.body.accessToken);
      assert.equal(r.body.userEmail, `new.${p}@social.test`);
      const claims = JSON.parse(Buffer.from(r.body.accessToken.split('.')[1], 'base64url').toString());
      const user = await t.call('GET', `/identity/resources/users/v1/${claims.sub}`, {
        token: vendor,
        headers: { 'gatehouse-tenant-id': claims.tenantId },
      });
      assert.equal(user.body.provider, p);
      assert.equal(user.body.verified, true);
      const pub = await t.call('GET', '/identity/resources/sso/v2');
      assert.ok(pub.body.some((c: { type: string }) => c.type === p));
      // The signed-in variant answers the same list, to a user token only.
      const authed = await t.call('GET', '/identity/resources/sso/v2/authenticated', { token: r.body.accessToken });
      assert.equal(authed.status, 200, JSON.stringify(authed.body));
      assert.deepEqual(authed.body, pub.body);
      assert.equal((await t.call('GET', '/identity/resources/sso/v2/authenticated')).status, 401);
    });
  }

  test('each provider has its real default endpoints', async () => {
    const { PROVIDERS } = await import('../../src/modules/social/index.ts');
    assert.equal(PROVIDERS.github.endpoints.tokenUrl, 'https://github.com/login/oauth/access_token');
    assert.equal(PROVIDERS.google.endpoints.authorizationUrl, 'https://accounts.google.com/o/oauth2/v2/auth');
    assert.equal(PROVIDERS.apple.endpoints.tokenUrl, 'https://appleid.apple.com/auth/token');
    assert.equal(
      PROVIDERS.facebook.endpoints.userInfoUrl,
      'https://graph.facebook.com/me?fields=id,name,email,picture',
    );
  });

  test('links to an existing user only by a verified email', async () => {
    await account(t, { id: 'link-acct', name: 'Link' });
    const made = await user(t, 'link-acct', {
      email: 'linked@social.test',
      name: 'Linked',
      password: 'Very-Long-Passw0rd!x',
    });
    await configure('github', { allowSignups: false });
    fake.people.github = { sub: 'gh-1', email: 'linked@social.test', verified: false, name: 'Linked' };
    const refused = await signIn('github');
    assert.equal(refused.status, 403);
    assert.equal(refused.body.errorCode, 'GH-66018');
    fake.people.github = { sub: 'gh-1', email: 'linked@social.test', verified: true, name: 'Linked' };
    const ok = await signIn('github');
    assert.equal(ok.status, 200, JSON.stringify(ok.body));
    assert.equal(ok.body.userId, made.id);
    fake.people.github = { sub: 'gh-2', email: 'stranger@social.test', verified: true, name: 'Stranger' };
    const closed = await signIn('github');
    assert.equal(closed.status, 403);
    assert.equal(closed.body.errorCode, 'GH-66019', 'no sign-up when the policy is off');
  });

  test('state mismatch, nonce mismatch, redirect not in the allow-list, inactive provider', async () => {
    await configure('google');
    fake.people.google = { sub: 'g-9', email: 'nonce@social.test', verified: true, name: 'N' };
    const wrongState = await t.call('POST', '/identity/resources/auth/v1/user/sso/google/postlogin', {
      body: { code: 'x', state: 'made-up' },
    });
    assert.equal(wrongState.status, 400);
    assert.equal(wrongState.body.errorCode, 'GH-66009');
    const gh = await t.call('POST', '/identity/resources/auth/v1/user/sso/github/prelogin', { body: {} });
    const ghState = new URL(gh.body.address).searchParams.get('state');
    const crossed = await t.call('POST', '/identity/resources/auth/v1/user/sso/google/postlogin', {
      body: { code: 'x', state: ghState },
    });
    assert.equal(crossed.status, 400, 'a state started for another provider');
    fake.tweaks.wrongNonce = true;
    const nonce = await signIn('google');
    fake.tweaks.wrongNonce = false;
    assert.equal(nonce.status, 401);
    assert.match(nonce.body.errors[0], /nonce/);
    const evil = await t.call('POST', '/identity/resources/auth/v1/user/sso/google/prelogin', {
      body: { redirectUri: 'https://evil.example/cb' },
    });
    assert.equal(evil.status, 400);
    assert.equal(evil.body.errorCode, 'GH-66010');
    await configure('slack', { active: false });
    assert.equal(
      (await t.call('POST', '/identity/resources/auth/v1/user/sso/slack/prelogin', { body: {} })).status,
      404,
    );
    assert.equal(
      (await t.call('POST', '/identity/resources/sso/v2', { token: vendor, body: { type: 'myspace', clientId: 'x' } }))
        .status,
      400,
    );
  });

  test('custom OAuth 2.0 / OIDC provider configured by URLs, served by a real OpenID provider', async () => {
    const idp = await startOidcIdp([
      { client_id: 'gatehouse-custom', client_secret: 'custom-secret-0123456789', redirect_uris: [APP_CB] },
    ]);
    try {
      idp.accounts.set('c-1', { email: 'custom.user@social.test', name: 'Custom User' });
      idp.state.nextLogin = 'c-1';
      const made = await t.call('POST', '/identity/resources/sso/custom/v1', {
        token: vendor,
        body: {
          type: 'acme-id',
          clientId: 'gatehouse-custom',
          secret: 'custom-secret-0123456789',
          redirectUrl: APP_CB,
          authorizationUrl: `${idp.issuer}/auth`,
          tokenUrl: `${idp.issuer}/token`,
          userInfoUrl: `${idp.issuer}/me`,
          scopes: 'openid email profile',
          ssoLogoUrl: 'https://logo.example/a.png',
          displayName: 'Acme ID',
          active: true,
          allowSignups: true,
        },
      });
      assert.equal(made.status, 200, JSON.stringify(made.body));
      assert.equal((await t.call('GET', '/identity/resources/sso/custom/v1', { token: vendor })).body.length, 1);
      const pre = await t.call('POST', '/identity/resources/auth/v1/user/sso/acme-id/prelogin', { body: {} });
      assert.equal(pre.status, 200, JSON.stringify(pre.body));
      const back = await idp.authorize(pre.body.address, APP_CB);
      const r = await t.call('POST', '/identity/resources/auth/v1/user/sso/acme-id/postlogin', {
        body: { code: back.searchParams.get('code'), state: back.searchParams.get('state') },
      });
      assert.equal(r.status, 200, JSON.stringify(r.body));
      assert.equal(r.body.userEmail, 'custom.user@social.test');
      assert.equal(
        (
          await t.call('PATCH', `/identity/resources/sso/custom/v1/${made.body.id}`, {
            token: vendor,
            body: { active: false },
          })
        ).status,
        200,
      );
      assert.equal(
        (await t.call('POST', '/identity/resources/auth/v1/user/sso/acme-id/prelogin', { body: {} })).status,
        404,
      );
      assert.equal(
        (await t.call('DELETE', `/identity/resources/sso/custom/v1/${made.body.id}`, { token: vendor })).status,
        200,
      );
    } finally {
      await idp.close();
    }
  });
});
