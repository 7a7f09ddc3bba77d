import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { exportJWK, generateKeyPair, SignJWT } from 'jose';
import * as samlify from 'samlify';
import { totpCode } from '../../src/modules/mfa/totp.ts';
import { startTestApp, type TestApp } from '../helpers/harness.ts';
import { codeIn, linkIn, startMailbox, type Mail, type Mailbox } from '../helpers/mailbox.ts';
import { smsCode, startSmsServer, type SmsServer } from '../helpers/sms-server.ts';
import { startOidcIdp } from '../fixtures/sso/oidc-idp.ts';
import { PASSWORD, account, user } from '../fixtures/builders.ts';

/**
 * The sign-in flows working together: the MFA challenge after every way of signing in
 * (passwordless, activation, invitation, SAML, OIDC, social) finished through the MFA verify routes; an IdP's own MFA
 * trusted only when the SSO configuration says so; email-domain restrictions at sign-up and invitation; social
 * identities by provider subject; sign-up users activated by a verified IdP email; housekeeping of expired state.
 * Real protocol peers: SMTP server, Twilio-like SMS API, samlify IdP, oidc-provider, a local Google-like provider.
 */
samlify.setSchemaValidator({ validate: async () => 'skipped' });

let t: TestApp;
let vendor: string;
let mailbox: Mailbox;
let sms: SmsServer;

const A = '/identity/resources/auth/v1';
const M = `${A}/user/mfa`;
const U = '/identity/resources/users/v1';
const P = '/identity/resources/configurations/v1/mfa-policy';
const D = '/identity/resources/configurations/restrictions/v1/email-domain';
const APP = 'https://app.example/after-login';
const OIDC_CB = 'https://app.example/oidc/callback';
const SOCIAL_CB = 'https://app.example/social/callback';

const claims = (token: string) => JSON.parse(Buffer.from(token.split('.')[1], 'base64url').toString());
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const tenantHeader = (tenantId: string) => ({ 'gatehouse-tenant-id': tenantId });

/** Codes of an authenticator app the test holds; each code is a fresh step (the server accepts a step once). */
class App {
  used = -Infinity;
  constructor(readonly secret: string) {}
  async code(): Promise<string> {
    while (Date.now() % 30_000 > 29_000) await sleep(100);
    const now = Math.floor(Date.now() / 30_000);
    const step = Math.max(now - 1, this.used + 1);
    if (step > now + 1) {
      await sleep(30_000 - (Date.now() % 30_000) + 50);
      return this.code();
    }
    this.used = step;
    return totpCode(this.secret, step);
  }
}
const secretOf = (uri: string) => new URL(uri).searchParams.get('secret')!;

async function policy(tenantId: string, body: Record<string, unknown>) {
  const r = await t.call('PUT', P, { token: vendor, body, headers: tenantHeader(tenantId) });
  assert.equal(r.status, 200, JSON.stringify(r.body));
}
/** An administrator enrols an authenticator app for a user (environment token + gatehouse-user-id). */
async function enrolTotp(userId: string): Promise<App> {
  const h = { 'gatehouse-user-id': userId };
  const e = await t.call('POST', '/identity/resources/users/v1/mfa/authenticator/enroll', {
    token: vendor,
    headers: h,
  });
  assert.equal(e.status, 200, JSON.stringify(e.body));
  const app = new App(secretOf(e.body.uri));
  const v = await t.call('POST', '/identity/resources/users/v1/mfa/authenticator/enroll/verify', {
    token: vendor,
    headers: h,
    body: { token: await app.code() },
  });
  assert.equal(v.status, 200, JSON.stringify(v.body));
  return app;
}
/** A sign-in answered the MFA challenge: no tokens, no refresh cookie, the challenge fields survive the route's schema. */
function assertChallenge(
  r: { status: number; body: any; headers: Record<string, unknown> },
  status: number,
  enrolled: boolean,
) {
  assert.equal(r.status, status, JSON.stringify(r.body));
  assert.equal(r.body.mfaRequired, true, JSON.stringify(r.body));
  assert.equal(typeof r.body.mfaToken, 'string');
  assert.equal(r.body.mfaEnrolled, enrolled);
  assert.ok(Array.isArray(r.body.mfaStrategies) && r.body.mfaStrategies.includes('AuthenticatorApp'));
  assert.equal(r.body.mfaDevices.authenticators.length, enrolled ? 1 : 0);
  assert.equal(r.body.accessToken, undefined);
  assert.doesNotMatch(String(r.headers['set-cookie'] ?? ''), /gh_refresh=/);
  return r.body.mfaToken as string;
}
/** Finishes a pending sign-in with the authenticator code; answers the token claims (amr must hold mfa + otp). */
async function verifyTotp(mfaToken: string, app: App, body: Record<string, unknown> = {}) {
  const r = await t.call('POST', `${M}/verify`, { body: { mfaToken, value: await app.code(), ...body } });
  assert.equal(r.status, 201, JSON.stringify(r.body));
  assert.match(String(r.headers['set-cookie']), /gh_refresh=/);
  const c = claims(r.body.accessToken);
  assert.ok(c.amr.includes('mfa') && c.amr.includes('otp'), `amr ${c.amr}`);
  assert.equal(c.acr, 'http://schemas.openid.net/pape/policies/2007/06/multi-factor');
  return { claims: c, reply: r };
}
/** Forced MFA, no factor yet: enrols an authenticator inside the sign-in and finishes it. */
async function enrolAtSignIn(mfaToken: string) {
  const e = await t.call('POST', `${M}/authenticator/enroll`, { body: { mfaToken } });
  assert.equal(e.status, 201, JSON.stringify(e.body));
  const app = new App(secretOf(e.body.uri));
  const r = await t.call('POST', `${M}/authenticator/enroll/verify`, { body: { mfaToken, token: await app.code() } });
  assert.equal(r.status, 201, JSON.stringify(r.body));
  assert.equal(r.body.recoveryCodes.length, 10);
  const c = claims(r.body.accessToken);
  assert.ok(c.amr.includes('mfa'), `amr ${c.amr}`);
  return { app, claims: c };
}
async function mailFor(email: string, count: number): Promise<Mail> {
  return mailbox.waitFor((m) => m.to.includes(email) && mailbox.to(email).indexOf(m) >= count);
}
async function userIdOf(email: string): Promise<string | undefined> {
  return (await t.db.query<{ id: string }>('SELECT id FROM users WHERE email = $1', [email])).rows[0]?.id;
}

before(async () => {
  t = await startTestApp({
    CODE_RATE_LIMIT_PER_IP: '1000',
    LOGIN_RATE_LIMIT_PER_IP: '100000',
    OUTBOUND_ALLOW_PRIVATE_NETWORKS: 'true',
  });
  vendor = await t.vendorToken();
  mailbox = await startMailbox();
  await mailbox.configure(t);
  sms = await startSmsServer();
  await sms.configure(t);
  const env = await t.call('POST', '/identity/resources/configurations/v1', {
    token: vendor,
    body: { allowedRedirectUrls: [APP, OIDC_CB, SOCIAL_CB], allowSignups: true },
  });
  assert.ok(env.status < 300, JSON.stringify(env.body));
  const on = await t.call('POST', '/identity/resources/configurations/v1/auth/strategies', {
    token: vendor,
    body: { MagicLink: { active: true }, Code: { active: true } },
  });
  assert.equal(on.status, 200, JSON.stringify(on.body));
});
after(async () => {
  await t?.close();
  await mailbox?.close();
  await sms?.close();
});

describe('MFA after passwordless sign-in', () => {
  const email = 'pl.user@int.test';
  const phone = '+15550003333';
  let app: App;

  before(async () => {
    await account(t, { id: 'int-pl' });
    await policy('int-pl', { allowRememberMyDevice: true });
    const m = await t.call('POST', '/identity/resources/migrations/v1/local', {
      token: vendor,
      body: { tenantId: 'int-pl', email, name: 'PL', phoneNumber: phone, phoneNumberType: 'auth' },
    });
    assert.equal(m.status, 201, JSON.stringify(m.body));
    app = await enrolTotp((await userIdOf(email))!);
  });

  test('magic link: challenge, verify; the remembered device (cookie) then skips MFA at the next magic link', async () => {
    const link = async () => {
      const n = mailbox.to(email).length;
      assert.equal((await t.call('POST', `${A}/passwordless/magiclink/prelogin`, { body: { email } })).status, 200);
      return linkIn(await mailFor(email, n)).searchParams.get('token')!;
    };
    const r = await t.call('POST', `${A}/passwordless/magiclink/postlogin`, { body: { token: await link() } });
    const mfaToken = assertChallenge(r, 201, true);
    const { claims: c, reply } = await verifyTotp(mfaToken, app, { rememberDevice: true });
    assert.ok(c.amr.includes('email'));
    const remember = (reply.headers['set-cookie'] as string[]).find((s) => s.startsWith('gh_mfa_'));
    assert.ok(remember, 'the remember-device cookie is set');
    const again = await t.call('POST', `${A}/passwordless/magiclink/postlogin`, {
      body: { token: await link() },
      headers: { cookie: remember!.split(';')[0] },
    });
    assert.equal(again.status, 201, JSON.stringify(again.body));
    assert.ok(again.body.accessToken, 'the remembered device is honoured by the passwordless route');
    assert.equal(claims(again.body.accessToken).amr.includes('mfa'), false);
  });

  test('email code: challenge, then the verify route finishes with amr otp + email + mfa', async () => {
    const n = mailbox.to(email).length;
    assert.equal((await t.call('POST', `${A}/passwordless/code/prelogin`, { body: { email } })).status, 201);
    const code = codeIn(await mailFor(email, n));
    const r = await t.call('POST', `${A}/passwordless/code/postlogin`, { body: { token: code, email } });
    const { claims: c } = await verifyTotp(assertChallenge(r, 201, true), app);
    assert.ok(c.amr.includes('email'));
  });

  test('SMS code: challenge, then verify (amr sms + mfa)', async () => {
    const n = sms.messages.filter((s) => s.to === phone).length;
    assert.equal(
      (await t.call('POST', `${A}/passwordless/smscode/prelogin`, { body: { phoneNumber: phone } })).status,
      201,
    );
    const msg = await sms.waitFor((s) => s.to === phone && sms.messages.filter((x) => x.to === phone).indexOf(s) >= n);
    const r = await t.call('POST', `${A}/passwordless/smscode/postlogin`, {
      body: { token: smsCode(msg), phoneNumber: phone },
    });
    const { claims: c } = await verifyTotp(assertChallenge(r, 201, true), app);
    assert.ok(c.amr.includes('sms'));
  });
});

describe('MFA after activation and invitation', () => {
  test('a user who signed up is refused before any MFA challenge, then activation answers the challenge and enrolment finishes it', async () => {
    const s = await t.call('POST', `${U}/signUp`, {
      body: { provider: 'local', email: 'founder@int.test', password: PASSWORD, companyName: 'Int Founders' },
    });
    assert.equal(s.status, 201, JSON.stringify(s.body));
    const { userId, tenantId } = s.body;
    await policy(tenantId, { enforceMFAType: 'Force' });
    // The activation gate runs before the MFA gate: no second factor is asked of a user who may not sign in.
    const early = await t.call('POST', `${A}/user`, { body: { email: 'founder@int.test', password: PASSWORD } });
    assert.equal(early.status, 403, JSON.stringify(early.body));
    assert.equal(early.body.errorCode, 'GH-62004');
    assert.equal((await t.db.query('SELECT 1 FROM mfa_tokens WHERE user_id = $1', [userId])).rows.length, 0);

    const link = linkIn(await mailFor('founder@int.test', 0));
    const r = await t.call('POST', `${U}/activate`, {
      body: { userId: link.searchParams.get('userId'), token: link.searchParams.get('token') },
    });
    const done = await enrolAtSignIn(assertChallenge(r, 200, false));
    assert.equal(done.claims.tenantId, tenantId);
    assert.ok(done.claims.amr.includes('email'));
  });

  test('invitation acceptance into an account that forces MFA answers the challenge', async () => {
    await account(t, { id: 'int-inv' });
    await policy('int-inv', { enforceMFAType: 'Force' });
    const inv = await t.call('POST', '/identity/resources/users/v2', {
      token: vendor,
      headers: tenantHeader('int-inv'),
      body: { email: 'guest@int.test', name: 'Guest' },
    });
    assert.equal(inv.status, 201, JSON.stringify(inv.body));
    const link = linkIn(await mailFor('guest@int.test', 0));
    const r = await t.call('POST', `${U}/invitation/accept`, {
      body: { userId: link.searchParams.get('userId'), token: link.searchParams.get('token') },
    });
    const done = await enrolAtSignIn(assertChallenge(r, 200, false));
    assert.equal(done.claims.tenantId, 'int-inv');
  });
});

describe('email-domain restrictions at sign-up and invitation', () => {
  test('an invitation is checked against the account (and environment) rules; nothing is created when refused', async () => {
    await account(t, { id: 'int-dr' });
    const h = tenantHeader('int-dr');
    assert.equal(
      (await t.call('POST', D, { token: vendor, headers: h, body: { domain: 'partner.test', type: 'ALLOW' } })).status,
      201,
    );
    const cfg = await t.call('POST', `${D}/config`, {
      token: vendor,
      headers: h,
      body: { active: true, type: 'ALLOW' },
    });
    assert.ok(cfg.status < 300, JSON.stringify(cfg.body));
    const refused = await t.call('POST', '/identity/resources/users/v2', {
      token: vendor,
      headers: h,
      body: { email: 'someone@other.test' },
    });
    assert.equal(refused.status, 403, JSON.stringify(refused.body));
    assert.equal(refused.body.errorCode, 'GH-65009');
    assert.equal(await userIdOf('someone@other.test'), undefined, 'the refused invitation created no user');
    const ok = await t.call('POST', '/identity/resources/users/v2', {
      token: vendor,
      headers: h,
      body: { email: 'someone@sub.partner.test', skipInviteEmail: true },
    });
    assert.equal(ok.status, 201, JSON.stringify(ok.body));
  });

  test('sign-up is checked against the environment rules', async () => {
    assert.equal(
      (await t.call('POST', D, { token: vendor, body: { domain: 'blocked.test', type: 'BLOCK' } })).status,
      201,
    );
    const cfg = await t.call('POST', `${D}/config`, { token: vendor, body: { active: true, type: 'BLOCK' } });
    assert.ok(cfg.status < 300, JSON.stringify(cfg.body));
    try {
      const refused = await t.call('POST', `${U}/signUp`, {
        body: { provider: 'local', email: 'eve@blocked.test', password: PASSWORD },
      });
      assert.equal(refused.status, 403, JSON.stringify(refused.body));
      assert.equal(refused.body.errorCode, 'GH-65009');
      assert.match(refused.body.errors[0], /blocked\.test/);
      assert.equal(await userIdOf('eve@blocked.test'), undefined);
      const ok = await t.call('POST', `${U}/signUp`, {
        body: { provider: 'local', email: 'eve@fine.test', password: PASSWORD, skipInviteEmail: true },
      });
      assert.equal(ok.status, 201, JSON.stringify(ok.body));
    } finally {
      await t.call('POST', `${D}/config`, { token: vendor, body: { active: false } });
    }
  });
});

// -- SAML (samlify IdP signing real assertions) --
const FIX = join(import.meta.dirname, '..', 'fixtures', 'sso');
const EMAIL_FMT = 'urn:oasis:names:tc:SAML:1.1:nameid-format:emailAddress';
const REDIRECT = 'urn:oasis:names:tc:SAML:2.0:bindings:HTTP-Redirect';
const authn = (ref: string) =>
  `<saml:AuthnStatement AuthnInstant="${new Date().toISOString()}" SessionIndex="_${randomUUID()}"><saml:AuthnContext><saml:AuthnContextClassRef>${ref}</saml:AuthnContextClassRef></saml:AuthnContext></saml:AuthnStatement>`;
const TWO_FACTOR = 'urn:oasis:names:tc:SAML:2.0:ac:classes:MobileTwoFactorContract';
const PASSWORD_ONLY = 'urn:oasis:names:tc:SAML:2.0:ac:classes:PasswordProtectedTransport';

describe('MFA after SAML SSO', () => {
  const TENANT = 'int-saml';
  const h = tenantHeader(TENANT);
  const idp = samlify.IdentityProvider({
    entityID: 'https://idp.int.test/metadata',
    privateKey: readFileSync(join(FIX, 'idp-key.pem'), 'utf8'),
    signingCert: readFileSync(join(FIX, 'idp-cert.pem'), 'utf8'),
    nameIDFormat: [EMAIL_FMT],
    singleSignOnService: [{ Binding: REDIRECT, Location: 'https://idp.int.test/sso' }],
    wantAuthnRequestsSigned: false,
  });
  let sp: ReturnType<typeof samlify.ServiceProvider>;
  let configId: string;
  let alice: App;

  before(async () => {
    await account(t, { id: TENANT });
    await policy(TENANT, { enforceMFAType: 'Force' });
    const created = await t.call('POST', '/team/resources/sso/v1/configurations/metadata', {
      token: vendor,
      headers: h,
      body: { metadata: idp.getMetadata() },
    });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    configId = created.body.id;
    assert.equal(
      (
        await t.call('POST', `/team/resources/sso/v1/configurations/${configId}/domains`, {
          token: vendor,
          headers: h,
          body: { domain: 'int-saml.test' },
        })
      ).status,
      201,
    );
    assert.equal(
      (
        await t.call('PUT', '/team/resources/sso/v1/configurations/domains/int-saml.test/force-validate', {
          token: vendor,
          body: {},
        })
      ).status,
      200,
    );
    const md = await t.call('GET', `/identity/resources/sso/v1/saml/configurations/sp-metadata?tenantId=${TENANT}`);
    sp = samlify.ServiceProvider({ metadata: md.body as string });
  });

  /** Pre-login (optionally with the app's redirect), the IdP's signed answer, and the browser's form post to the ACS. */
  async function samlSignIn(email: string, o: { redirect?: boolean; authnStatement?: string } = {}) {
    const pre = await t.call('POST', `${A}/user/saml/prelogin`, {
      body: { email, ...(o.redirect ? { redirectUri: APP } : {}) },
    });
    assert.equal(pre.status, 200, JSON.stringify(pre.body));
    const url = new URL(pre.body.address);
    const query = Object.fromEntries(url.searchParams);
    const parsed = await idp.parseLoginRequest(sp, 'redirect', { query, octetString: url.search.slice(1) } as never);
    const requestId = parsed.extract.request!.id as string;
    const acs = sp.entityMeta.getAssertionConsumerService('urn:oasis:names:tc:SAML:2.0:bindings:HTTP-POST') as string;
    const now = Date.now();
    const res = await idp.createLoginResponse(
      sp,
      { extract: { request: { id: requestId } } } as never,
      'post',
      { email },
      {
        relayState: query.RelayState,
        customTagReplacement: (template: string) => {
          const tv: Record<string, string> = {
            ID: `_${randomUUID()}`,
            AssertionID: `_${randomUUID()}`,
            Destination: acs,
            Audience: sp.entityMeta.getEntityID(),
            EntityID: sp.entityMeta.getEntityID(),
            SubjectRecipient: acs,
            Issuer: 'https://idp.int.test/metadata',
            IssueInstant: new Date(now).toISOString(),
            AssertionConsumerServiceURL: acs,
            StatusCode: 'urn:oasis:names:tc:SAML:2.0:status:Success',
            ConditionsNotBefore: new Date(now).toISOString(),
            ConditionsNotOnOrAfter: new Date(now + 300_000).toISOString(),
            SubjectConfirmationDataNotOnOrAfter: new Date(now + 300_000).toISOString(),
            NameIDFormat: EMAIL_FMT,
            NameID: email,
            InResponseTo: requestId,
            AuthnStatement: 'AUTHN_HERE',
            AttributeStatement: '',
          };
          return {
            id: tv.ID,
            context: (samlify.SamlLib ?? (samlify as any).default.SamlLib)
              .replaceTagsByValue(template, tv)
              .replace('AUTHN_HERE', o.authnStatement ?? ''),
          };
        },
      },
    );
    return t.call('POST', `${A}/user/saml/postlogin`, {
      raw: new URLSearchParams({ SAMLResponse: res.context as string, RelayState: query.RelayState }).toString(),
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
  }
  /** The challenge a redirecting ACS put into the app URL's fragment. */
  function fragmentChallenge(r: { status: number; headers: Record<string, unknown>; body: unknown }) {
    assert.equal(r.status, 302, JSON.stringify(r.body));
    const loc = new URL(String(r.headers.location));
    assert.equal(loc.origin + loc.pathname, APP);
    assert.doesNotMatch(String(r.headers['set-cookie'] ?? ''), /gh_refresh=/, 'no session before the second factor');
    const f = new URLSearchParams(loc.hash.slice(1));
    assert.equal(f.get('mfaRequired'), 'true');
    return f;
  }

  test('JSON ACS: a just-provisioned user of an account that forces MFA gets the challenge and enrols inside the sign-in', async () => {
    const r = await samlSignIn('alice@int-saml.test');
    const done = await enrolAtSignIn(assertChallenge(r, 200, false));
    assert.ok(done.claims.amr.includes('saml') && done.claims.amr.includes('sso'));
    assert.equal(done.claims.tenantId, TENANT);
    alice = done.app;
  });

  test('redirecting ACS: 302 to the app with the challenge in the URL fragment and no cookie; the MFA verify route finishes', async () => {
    const f = fragmentChallenge(await samlSignIn('alice@int-saml.test', { redirect: true }));
    assert.equal(f.get('mfaEnrolled'), 'true');
    const { claims: c } = await verifyTotp(f.get('mfaToken')!, alice);
    assert.ok(c.amr.includes('saml'));
  });

  test("the IdP's own MFA (AuthnContextClassRef) counts only when the configuration trusts it", async () => {
    // Not trusted (default): the account's policy still asks for Gatehouse MFA.
    fragmentChallenge(await samlSignIn('alice@int-saml.test', { redirect: true, authnStatement: authn(TWO_FACTOR) }));
    const patched = await t.call('PATCH', `/team/resources/sso/v1/configurations/${configId}`, {
      token: vendor,
      headers: h,
      body: { configMetadata: { trustIdpMfa: true } },
    });
    assert.equal(patched.status, 200, JSON.stringify(patched.body));
    const trusted = await samlSignIn('alice@int-saml.test', { redirect: true, authnStatement: authn(TWO_FACTOR) });
    assert.equal(trusted.status, 302);
    assert.equal(trusted.headers.location, APP);
    const cookie = String(trusted.headers['set-cookie']);
    assert.match(cookie, /gh_refresh=/);
    const refreshed = await t.call('POST', `${A}/user/token/refresh`, { headers: { cookie: cookie.split(';')[0] } });
    assert.equal(refreshed.status, 201, JSON.stringify(refreshed.body));
    const c = claims(refreshed.body.accessToken);
    assert.ok(c.amr.includes('mfa') && c.amr.includes('saml'), `amr ${c.amr}`);
    // Trusted, but this time the IdP used a password only: Gatehouse MFA again.
    fragmentChallenge(
      await samlSignIn('alice@int-saml.test', { redirect: true, authnStatement: authn(PASSWORD_ONLY) }),
    );
  });

  test("account domain rules refuse new users provisioned by SSO, never the account's members", async () => {
    assert.equal(
      (await t.call('POST', D, { token: vendor, headers: h, body: { domain: 'elsewhere.test', type: 'ALLOW' } }))
        .status,
      201,
    );
    assert.ok(
      (await t.call('POST', `${D}/config`, { token: vendor, headers: h, body: { active: true, type: 'ALLOW' } }))
        .status < 300,
    );
    try {
      const member = await samlSignIn('alice@int-saml.test');
      assertChallenge(member, 200, true);
      const newcomer = await samlSignIn('bob@int-saml.test');
      assert.equal(newcomer.status, 403, JSON.stringify(newcomer.body));
      assert.equal(newcomer.body.errorCode, 'GH-65009');
    } finally {
      await t.call('POST', `${D}/config`, { token: vendor, headers: h, body: { active: false } });
    }
  });
});

describe('MFA after OIDC SSO', () => {
  const TENANT = 'int-oidc';
  const h = tenantHeader(TENANT);
  const meta = (idpIssuer: string, trust: boolean) => ({
    issuer: idpIssuer,
    scopes: 'openid email profile',
    provider: 'okta',
    trustIdpMfa: trust,
  });
  let idp: Awaited<ReturnType<typeof startOidcIdp>>;
  let configId: string;
  let bob: App;

  before(async () => {
    idp = await startOidcIdp([
      { client_id: 'int-oidc', client_secret: 'int-oidc-secret-0123456789', redirect_uris: [OIDC_CB] },
    ]);
    idp.accounts.set('u-bob', { email: 'bob@int-oidc.test', name: 'Bob' });
    await account(t, { id: TENANT });
    const made = await t.call('POST', '/team/resources/sso/v1/configurations', {
      token: vendor,
      headers: h,
      body: {
        type: 'oidc',
        enabled: true,
        oidcClientId: 'int-oidc',
        oidcSecret: 'int-oidc-secret-0123456789',
        configMetadata: meta(idp.issuer, false),
      },
    });
    assert.equal(made.status, 201, JSON.stringify(made.body));
    configId = made.body.id;
    assert.equal(
      (
        await t.call('POST', `/team/resources/sso/v1/configurations/${configId}/domains`, {
          token: vendor,
          headers: h,
          body: { domain: 'int-oidc.test' },
        })
      ).status,
      201,
    );
    assert.equal(
      (
        await t.call('PUT', '/team/resources/sso/v1/configurations/domains/int-oidc.test/force-validate', {
          token: vendor,
          body: {},
        })
      ).status,
      200,
    );
    bob = await enrolTotp((await user(t, TENANT, { email: 'bob@int-oidc.test', name: 'bob' })).id);
  });
  after(async () => idp?.close());

  async function oidcSignIn(amr?: string[]) {
    idp.state.nextLogin = 'u-bob';
    idp.state.nextAmr = amr;
    const pre = await t.call('POST', '/identity/resources/auth/v2/user/sso/prelogin', {
      body: { email: 'bob@int-oidc.test', redirectUri: OIDC_CB },
    });
    assert.equal(pre.status, 200, JSON.stringify(pre.body));
    const cb = await idp.authorize(pre.body.address, OIDC_CB);
    return t.call('POST', `${A}/user/oidc/postlogin`, {
      body: {
        code: cb.searchParams.get('code'),
        state: cb.searchParams.get('state'),
        iss: cb.searchParams.get('iss') ?? undefined,
      },
    });
  }

  test('an enrolled user gets the challenge after the OIDC post-login and finishes with the MFA verify route', async () => {
    const { claims: c } = await verifyTotp(assertChallenge(await oidcSignIn(), 200, true), bob);
    assert.ok(c.amr.includes('sso'));
    assert.equal(c.tenantId, TENANT);
  });

  test('amr mfa from the IdP satisfies the gate only when the configuration trusts the IdP', async () => {
    assertChallenge(await oidcSignIn(['pwd', 'mfa']), 200, true);
    const patched = await t.call('PATCH', `/team/resources/sso/v1/configurations/${configId}`, {
      token: vendor,
      headers: h,
      body: { configMetadata: meta(idp.issuer, true) },
    });
    assert.equal(patched.status, 200, JSON.stringify(patched.body));
    const trusted = await oidcSignIn(['pwd', 'mfa']);
    assert.equal(trusted.status, 200, JSON.stringify(trusted.body));
    assert.ok(trusted.body.accessToken);
    assert.ok(claims(trusted.body.accessToken).amr.includes('mfa'));
    assertChallenge(await oidcSignIn(['pwd']), 200, true);
  });
});

/** A local provider speaking Google's OpenID endpoints: authorize (PKCE), token (ID token with nonce), userinfo. */
async function startGoogle() {
  const people = { current: { sub: '', email: '', verified: true, name: '' } };
  const codes = new Map<string, { nonce?: string; clientId: string; person: typeof people.current }>();
  const tokens = new Map<string, typeof people.current>();
  // ID tokens are signed RS256 with the key published at /jwks (the sign-in verifies the signature).
  const { privateKey: key, publicKey } = await generateKeyPair('RS256');
  const jwks = { keys: [{ ...(await exportJWK(publicKey)), kid: 'g1', alg: 'RS256', use: 'sig' }] };
  const read = (req: IncomingMessage) =>
    new Promise<string>((r) => {
      let s = '';
      req.on('data', (c) => (s += c));
      req.on('end', () => r(s));
    });
  const server: Server = createServer(async (req, res) => {
    const url = new URL(req.url!, 'http://x');
    const json = (status: number, v: unknown) => {
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(v));
    };
    if (url.pathname === '/jwks') return json(200, jwks);
    if (url.pathname === '/authorize') {
      const code = randomUUID();
      codes.set(code, {
        nonce: url.searchParams.get('nonce') ?? undefined,
        clientId: url.searchParams.get('client_id')!,
        person: { ...people.current },
      });
      const back = new URL(url.searchParams.get('redirect_uri')!);
      back.searchParams.set('code', code);
      back.searchParams.set('state', url.searchParams.get('state')!);
      res.writeHead(302, { location: back.href });
      return res.end();
    }
    if (url.pathname === '/token') {
      const f = new URLSearchParams(await read(req));
      const c = codes.get(f.get('code') ?? '');
      codes.delete(f.get('code') ?? '');
      if (!c || !f.get('code_verifier')) return json(400, { error: 'invalid_grant' });
      const at = `at-${randomUUID()}`;
      tokens.set(at, c.person);
      const idToken = await new SignJWT({ nonce: c.nonce, email: c.person.email, email_verified: c.person.verified })
        .setProtectedHeader({ alg: 'RS256', kid: 'g1' })
        .setIssuer('https://accounts.google.example')
        .setAudience(c.clientId)
        .setSubject(c.person.sub)
        .setIssuedAt()
        .setExpirationTime('5m')
        .sign(key);
      return json(200, { access_token: at, token_type: 'bearer', id_token: idToken });
    }
    const p = tokens.get((req.headers.authorization ?? '').replace(/^Bearer /, ''));
    if (url.pathname === '/userinfo' && p)
      return json(200, { sub: p.sub, email: p.email, email_verified: p.verified, name: p.name });
    json(401, { error: 'invalid_token' });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { base, people, close: () => new Promise<void>((r) => server.close(() => r())) };
}

describe('social login: MFA, identities by subject, activation', () => {
  let google: Awaited<ReturnType<typeof startGoogle>>;

  before(async () => {
    google = await startGoogle();
    const b = google.base;
    const r = await t.call('POST', '/identity/resources/sso/v2', {
      token: vendor,
      body: {
        type: 'google',
        clientId: 'client-google',
        secret: 'secret-google',
        redirectUrl: SOCIAL_CB,
        active: true,
        authorizationUrl: `${b}/authorize`,
        tokenUrl: `${b}/token`,
        userInfoUrl: `${b}/userinfo`,
        issuer: 'https://accounts.google.example',
        jwksUrl: `${b}/jwks`,
        allowSignups: true,
      },
    });
    assert.equal(r.status, 200, JSON.stringify(r.body));
  });
  after(async () => google?.close());

  async function googleSignIn(person: { sub: string; email: string; verified?: boolean }) {
    google.people.current = { verified: true, name: person.email.split('@')[0], ...person };
    const pre = await t.call('POST', `${A}/user/sso/google/prelogin`, { body: {} });
    assert.equal(pre.status, 200, JSON.stringify(pre.body));
    const back = new URL((await fetch(pre.body.address, { redirect: 'manual' })).headers.get('location')!);
    return t.call('POST', `${A}/user/sso/google/postlogin`, {
      body: { code: back.searchParams.get('code'), state: back.searchParams.get('state') },
    });
  }

  test('an existing user with MFA who links by verified email gets the challenge and finishes with the verify route', async () => {
    await account(t, { id: 'int-social' });
    const app = await enrolTotp((await user(t, 'int-social', { email: 'carol@social.test', name: 'carol' })).id);
    const r = await googleSignIn({ sub: 'g-carol', email: 'carol@social.test' });
    const { claims: c } = await verifyTotp(assertChallenge(r, 200, true), app);
    assert.ok(c.amr.includes('social') && c.amr.includes('google'), `amr ${c.amr}`);
  });

  test('the provider subject finds the user again: an email change at the provider makes no second user', async () => {
    const first = await googleSignIn({ sub: 'g-dave', email: 'dave@social.test' });
    assert.equal(first.status, 200, JSON.stringify(first.body));
    const userId = first.body.userId;
    const renamed = await googleSignIn({ sub: 'g-dave', email: 'dave.renamed@social.test' });
    assert.equal(renamed.status, 200, JSON.stringify(renamed.body));
    assert.equal(renamed.body.userId, userId);
    assert.equal(await userIdOf('dave.renamed@social.test'), undefined, 'no second user for the new address');
    // The subject is what counts once linked: even an address the provider no longer vouches for signs the user in.
    const unverified = await googleSignIn({ sub: 'g-dave', email: 'dave.other@social.test', verified: false });
    assert.equal(unverified.status, 200, JSON.stringify(unverified.body));
    assert.equal(unverified.body.userId, userId);
    const { rows } = await t.db.query<{ subject: string; email: string }>(
      "SELECT subject, email FROM user_identities WHERE provider = 'google' AND user_id = $1",
      [userId],
    );
    assert.deepEqual(rows, [{ subject: 'g-dave', email: 'dave.other@social.test' }]);
  });

  test('email linking happens once: another subject with the same verified email is refused', async () => {
    const other = await googleSignIn({ sub: 'g-mallory', email: 'dave@social.test' });
    assert.equal(other.status, 409, JSON.stringify(other.body));
    assert.equal(other.body.errorCode, 'GH-66021');
    // A new address the provider does not vouch for makes a new user, unverified; an existing user's is refused.
    const unverified = await googleSignIn({ sub: 'g-nobody', email: 'nobody@social.test', verified: false });
    assert.equal(unverified.status, 200, JSON.stringify(unverified.body));
    assert.equal(unverified.body.emailVerified, false);
    const taken = await googleSignIn({ sub: 'g-nobody-2', email: 'dave@social.test', verified: false });
    assert.equal(taken.status, 403);
    assert.equal(taken.body.errorCode, 'GH-66018');
  });

  test('a user who signed up and never activated is activated by a verified provider email; the sign-up password is dropped', async () => {
    const s = await t.call('POST', `${U}/signUp`, {
      body: { provider: 'local', email: 'erin@social.test', password: PASSWORD },
    });
    assert.equal(s.status, 201, JSON.stringify(s.body));
    const link = linkIn(await mailFor('erin@social.test', 0));
    const r = await googleSignIn({ sub: 'g-erin', email: 'erin@social.test' });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.equal(r.body.userId, s.body.userId);
    assert.equal(r.body.emailVerified, true);
    const pw = await t.call('POST', `${A}/user`, { body: { email: 'erin@social.test', password: PASSWORD } });
    assert.equal(pw.status, 401, 'the password typed at sign-up (mailbox unproven then) no longer signs in');
    const stale = await t.call('POST', `${U}/activate`, {
      body: {
        userId: link.searchParams.get('userId'),
        token: link.searchParams.get('token'),
        password: 'another long passphrase 42',
      },
    });
    assert.equal(stale.status, 410, JSON.stringify(stale.body));
    const { rows } = await t.db.query("SELECT 1 FROM events WHERE event_key = 'user.activated' AND entity_id = $1", [
      s.body.userId,
    ]);
    assert.equal(rows.length, 1);
  });
});

describe('housekeeping', () => {
  test('the purge removes expired flow state, MFA tokens and codes, spent one-time codes, ended sessions and finished message jobs; live rows stay', async () => {
    await account(t, { id: 'int-hk' });
    const uid = (await user(t, 'int-hk', { email: 'hk@int.test', name: 'hk' })).id;
    const q = (sql: string, params: unknown[] = []) => t.db.query(sql, params);
    const ago = (s: string) => `now() - interval '${s}'`;
    const ahead = (s: string) => `now() + interval '${s}'`;
    for (const [k, at] of [
      ['hk-old', ago('2 hours')],
      ['hk-live', ahead('10 minutes')],
    ])
      await q(`INSERT INTO sso_flow_states (state_hash, kind, expires_at) VALUES ($1, 'saml', ${at})`, [k]);
    for (const [k, at] of [
      ['_hk-old', ago('1 minute')],
      ['_hk-live', ahead('5 minutes')],
    ])
      await q(`INSERT INTO sso_assertions (assertion_id, tenant_id, expires_at) VALUES ($1, 'int-hk', ${at})`, [k]);
    for (const [k, at] of [
      ['hk-old', ago('1 minute')],
      ['hk-live', ahead('10 minutes')],
    ]) {
      await q(
        `INSERT INTO mfa_tokens (token_hash, user_id, tenant_id, amr, expires_at) VALUES ($1, $2, 'int-hk', '{pwd}', ${at})`,
        [k, uid],
      );
      await q(
        `INSERT INTO mfa_codes (token_hash, user_id, purpose, code_hash, expires_at) VALUES ($1, $2, 'signin', 'x', ${at})`,
        [k, uid],
      );
      await q(`INSERT INTO mfa_remembered_devices (token_hash, user_id, expires_at) VALUES ($1, $2, ${at})`, [k, uid]);
    }
    const otc = { expired: randomUUID(), spent: randomUUID(), recentlySpent: randomUUID(), live: randomUUID() };
    await q(
      `INSERT INTO one_time_codes (id, purpose, user_id, expires_at) VALUES ($1, 'magiclink', $2, ${ago('8 days')})`,
      [otc.expired, uid],
    );
    await q(
      `INSERT INTO one_time_codes (id, purpose, user_id, expires_at, used_at) VALUES ($1, 'activation', $2, ${ahead('1 day')}, ${ago('8 days')})`,
      [otc.spent, uid],
    );
    await q(
      `INSERT INTO one_time_codes (id, purpose, user_id, expires_at, used_at) VALUES ($1, 'code', $2, ${ago('1 day')}, ${ago('1 day')})`,
      [otc.recentlySpent, uid],
    );
    await q(
      `INSERT INTO one_time_codes (id, purpose, user_id, expires_at) VALUES ($1, 'code', $2, ${ahead('10 minutes')})`,
      [otc.live, uid],
    );
    const ses = { expired: randomUUID(), revoked: randomUUID(), live: randomUUID() };
    await q(`INSERT INTO sessions (id, tenant_id, user_id, expires_at) VALUES ($1, 'int-hk', $2, ${ago('8 days')})`, [
      ses.expired,
      uid,
    ]);
    await q(
      `INSERT INTO sessions (id, tenant_id, user_id, expires_at, revoked_at) VALUES ($1, 'int-hk', $2, ${ahead('20 days')}, ${ago('8 days')})`,
      [ses.revoked, uid],
    );
    await q(
      `INSERT INTO sessions (id, tenant_id, user_id, expires_at) VALUES ($1, 'int-hk', $2, ${ahead('20 days')})`,
      [ses.live, uid],
    );
    await q('INSERT INTO refresh_tokens (token_hash, session_id) VALUES ($1, $2), ($3, $4)', [
      'hk-rt-old',
      ses.expired,
      'hk-rt-live',
      ses.live,
    ]);
    const job = { delivered: randomUUID(), justDelivered: randomUUID(), other: randomUUID(), failed: randomUUID() };
    const jobRow = (id: string, kind: string, state: string, done: string | null) =>
      q(
        `INSERT INTO jobs (id, kind, state, payload, completed_at) VALUES ($1, $2, $3, '{"sealed":"x"}', ${done ?? 'NULL'})`,
        [id, kind, state],
      );
    await jobRow(job.delivered, 'messaging.deliver', 'completed', ago('2 hours'));
    await jobRow(job.justDelivered, 'messaging.deliver', 'completed', 'now()');
    await jobRow(job.other, 'user-migration.import', 'completed', ago('2 hours'));
    await jobRow(job.failed, 'messaging.deliver', 'failed', ago('3 hours'));

    const removed = await t.ctx.housekeeping.purge();
    for (const k of [
      'sso_flow_states',
      'sso_assertions',
      'mfa_tokens',
      'mfa_codes',
      'mfa_remembered_devices',
      'one_time_codes',
      'sessions',
      'message_jobs',
    ])
      assert.ok(removed[k] >= 1, `${k}: ${JSON.stringify(removed)}`);

    const keys = async (sql: string, params: unknown[] = []) =>
      (await q(sql, params)).rows.map((r: any) => Object.values(r)[0]).sort();
    assert.deepEqual(await keys("SELECT state_hash FROM sso_flow_states WHERE state_hash LIKE 'hk-%'"), ['hk-live']);
    assert.deepEqual(await keys("SELECT assertion_id FROM sso_assertions WHERE assertion_id LIKE '_hk-%'"), [
      '_hk-live',
    ]);
    for (const table of ['mfa_tokens', 'mfa_codes', 'mfa_remembered_devices'])
      assert.deepEqual(await keys(`SELECT token_hash FROM ${table} WHERE user_id = $1`, [uid]), ['hk-live'], table);
    assert.deepEqual(
      await keys('SELECT id FROM one_time_codes WHERE user_id = $1', [uid]),
      [otc.recentlySpent, otc.live].sort(),
    );
    assert.deepEqual(await keys('SELECT id FROM sessions WHERE user_id = $1', [uid]), [ses.live]);
    assert.deepEqual(await keys("SELECT token_hash FROM refresh_tokens WHERE token_hash LIKE 'hk-rt-%'"), [
      'hk-rt-live',
    ]);
    assert.deepEqual(
      await keys('SELECT id FROM jobs WHERE id = ANY($1::uuid[])', [Object.values(job)]),
      [job.justDelivered, job.other].sort(),
    );
    // A second run finds nothing of ours left to remove and keeps the live rows.
    await t.ctx.housekeeping.purge();
    assert.deepEqual(await keys('SELECT id FROM sessions WHERE user_id = $1', [uid]), [ses.live]);
  });
});
