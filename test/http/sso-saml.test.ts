import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import * as samlify from 'samlify';
import { startTestApp, type TestApp } from '../helpers/harness.ts';
import { account } from '../fixtures/builders.ts';

/**
 * SAML 2.0 SSO against a real IdP built with samlify (signing real assertions with a key and self-signed
 * certificate from test/fixtures/sso). The IdP parses our AuthnRequest and answers through the HTTP-POST binding.
 */
samlify.setSchemaValidator({ validate: async () => 'skipped' });

const FIX = join(import.meta.dirname, '..', 'fixtures', 'sso');
const IDP_KEY = readFileSync(join(FIX, 'idp-key.pem'), 'utf8');
const IDP_CERT = readFileSync(join(FIX, 'idp-cert.pem'), 'utf8');
const EMAIL_FMT = 'urn:oasis:names:tc:SAML:1.1:nameid-format:emailAddress';
const REDIRECT = 'urn:oasis:names:tc:SAML:2.0:bindings:HTTP-Redirect';
const APP = 'https://app.example/after-login';
const TENANT = 'acme-saml';

function makeIdp(opts: { sigAlg?: string; wantSigned?: boolean } = {}) {
  return samlify.IdentityProvider({
    entityID: 'https://idp.test/metadata',
    privateKey: IDP_KEY,
    signingCert: IDP_CERT,
    nameIDFormat: [EMAIL_FMT],
    singleSignOnService: [{ Binding: REDIRECT, Location: 'https://idp.test/sso' }],
    requestSignatureAlgorithm: opts.sigAlg ?? 'http://www.w3.org/2001/04/xmldsig-more#rsa-sha256',
    wantAuthnRequestsSigned: opts.wantSigned ?? false,
  });
}

describe('SAML SSO', () => {
  let t: TestApp;
  let vendor: string;
  let configId: string;
  let sp: ReturnType<typeof samlify.ServiceProvider>;
  let adminRoleId: string;
  const idp = makeIdp();
  const h = { 'gatehouse-tenant-id': TENANT };

  before(async () => {
    t = await startTestApp();
    vendor = await t.vendorToken();
    await account(t, { id: TENANT, name: 'Acme' });
    assert.equal(
      (
        await t.call('POST', '/identity/resources/configurations/v1', {
          token: vendor,
          body: { allowedRedirectUrls: [APP] },
        })
      ).status < 300,
      true,
    );
    const roles = await t.call('POST', '/identity/resources/roles/v1', {
      token: vendor,
      body: [{ key: 'saml-admin', name: 'SAML admin', level: 1 }],
    });
    assert.equal(roles.status, 201);
    adminRoleId = (Array.isArray(roles.body) ? roles.body[0] : roles.body).id;

    const created = await t.call('POST', '/team/resources/sso/v1/configurations/metadata', {
      token: vendor,
      headers: h,
      body: { metadata: idp.getMetadata() },
    });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    configId = created.body.id;
    assert.equal(created.body.ssoEndpoint, 'https://idp.test/sso');
    const dom = await t.call('POST', `/team/resources/sso/v1/configurations/${configId}/domains`, {
      token: vendor,
      headers: h,
      body: { domain: 'acme.test' },
    });
    assert.equal(dom.status, 201);
    assert.match(dom.body.txtRecord, /^gatehouse-site-verification=/);
    assert.equal(
      (
        await t.call('PUT', '/team/resources/sso/v1/configurations/domains/acme.test/force-validate', {
          token: vendor,
          body: {},
        })
      ).status,
      200,
    );
    assert.equal(
      (
        await t.call('POST', `/team/resources/sso/v1/configurations/${configId}/groups`, {
          token: vendor,
          headers: h,
          body: { group: 'admins', roleIds: [adminRoleId] },
        })
      ).status,
      201,
    );

    const md = await t.call('GET', '/team/resources/sso/v1/saml/configurations/sp-metadata', { headers: h });
    assert.equal(md.status, 200);
    sp = samlify.ServiceProvider({ metadata: typeof md.body === 'string' ? md.body : JSON.stringify(md.body) });
  });
  after(() => t.close());

  /** Starts a sign-in and has the IdP parse our AuthnRequest; answers the request id and relay state. */
  async function start(email = 'alice@acme.test', idpUsed = idp) {
    const r = await t.call('POST', '/identity/resources/auth/v1/user/saml/prelogin', {
      body: { email, redirectUri: APP },
    });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.equal(r.body.type, 'saml');
    const url = new URL(r.body.address);
    assert.equal(url.origin + url.pathname, 'https://idp.test/sso');
    const query = Object.fromEntries(url.searchParams);
    const parsed = await idpUsed.parseLoginRequest(sp, 'redirect', {
      query,
      octetString: url.search
        .slice(1)
        .split('&')
        .filter((p) => !p.startsWith('Signature='))
        .join('&'),
    } as never);
    return { requestId: parsed.extract.request!.id as string, relayState: query.RelayState };
  }

  /** The IdP's signed response; `o` overrides template values (times, audience), `groups` become an attribute. */
  async function respond(
    requestId: string,
    relayState: string,
    o: Record<string, string> = {},
    groups: string[] = [],
    idpUsed = idp,
    email = 'alice@acme.test',
  ) {
    const now = Date.now();
    const acs = sp.entityMeta.getAssertionConsumerService('urn:oasis:names:tc:SAML:2.0:bindings:HTTP-POST') as string;
    const attrs = groups.length
      ? `<saml:AttributeStatement><saml:Attribute Name="groups">${groups.map((g) => `<saml:AttributeValue>${g}</saml:AttributeValue>`).join('')}</saml:Attribute><saml:Attribute Name="email"><saml:AttributeValue>${email}</saml:AttributeValue></saml:Attribute></saml:AttributeStatement>`
      : '';
    const res = await idpUsed.createLoginResponse(
      sp,
      { extract: { request: { id: requestId } } } as never,
      'post',
      { email },
      {
        relayState,
        customTagReplacement: (template: string) => {
          const tv: Record<string, string> = {
            ID: `_${randomUUID()}`,
            AssertionID: `_${randomUUID()}`,
            Destination: acs,
            Audience: sp.entityMeta.getEntityID(),
            EntityID: sp.entityMeta.getEntityID(),
            SubjectRecipient: acs,
            Issuer: 'https://idp.test/metadata',
            IssueInstant: new Date(now).toISOString(),
            AssertionConsumerServiceURL: acs,
            StatusCode: 'urn:oasis:names:tc:SAML:2.0:status:Success',
            ConditionsNotBefore: new Date(now).toISOString(),
            ConditionsNotOnOrAfter: new Date(now + 300_000).toISOString(),
            SubjectConfirmationDataNotOnOrAfter: new Date(now + 300_000).toISOString(),
            NameIDFormat: EMAIL_FMT,
            NameID: email,
            InResponseTo: requestId,
            AuthnStatement: '',
            AttributeStatement: 'ATTRS_HERE',
            ...o,
          };
          return {
            id: tv.ID,
            context: (samlify.SamlLib ?? (samlify as any).default.SamlLib)
              .replaceTagsByValue(template, tv)
              .replace('ATTRS_HERE', attrs),
          };
        },
      },
    );
    return res.context as string;
  }

  const post = (SAMLResponse: string, RelayState: string) =>
    t.call('POST', '/identity/resources/auth/v1/user/saml/postlogin', {
      raw: new URLSearchParams({ SAMLResponse, RelayState }).toString(),
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });

  test('SP metadata names the ACS and the account entity id; the IdP metadata filled the configuration', async () => {
    const xml = (await t.call('GET', `/identity/resources/sso/v1/saml/configurations/sp-metadata?tenantId=${TENANT}`))
      .body as string;
    assert.match(xml, /AssertionConsumerService[^>]+HTTP-POST[^>]+saml\/postlogin|saml\/postlogin[^>]+HTTP-POST/);
    assert.match(xml, /entityID="http:\/\/localhost:\d+\/sso\/saml\/acme-saml"/);
    const list = await t.call('GET', '/team/resources/sso/v1/configurations', { token: vendor, headers: h });
    assert.equal(list.body[0].idpEntityId, 'https://idp.test/metadata');
    assert.equal(list.body[0].domains[0].validated, true);
  });

  test('ACS post-login provisions the user just in time, maps IdP groups to roles and redirects to the app with the refresh cookie', async () => {
    const { requestId, relayState } = await start('alice@acme.test');
    const res = await post(await respond(requestId, relayState, {}, ['admins']), relayState);
    assert.equal(res.status, 302, JSON.stringify(res.body));
    assert.equal(res.headers.location, APP);
    const cookie = String(res.headers['set-cookie']);
    assert.match(cookie, /gh_refresh=/);
    const refreshed = await t.call('POST', '/identity/resources/auth/v1/user/token/refresh', {
      headers: { cookie: cookie.split(';')[0] },
    });
    assert.equal(refreshed.status, 201);
    const claims = JSON.parse(Buffer.from(refreshed.body.accessToken.split('.')[1], 'base64url').toString());
    assert.equal(claims.tenantId, TENANT);
    assert.equal(claims.email, 'alice@acme.test');
    assert.ok(claims.roles.includes('saml-admin'), `roles: ${claims.roles}`);
    const user = await t.call('GET', `/identity/resources/users/v1/${claims.sub}`, { token: vendor, headers: h });
    assert.equal(user.body.provider, 'saml');
    assert.equal(user.body.verified, true);
  });

  test('a replayed assertion is refused', async () => {
    const { requestId, relayState } = await start();
    const saml = await respond(requestId, relayState);
    assert.equal((await post(saml, relayState)).status, 302);
    const again = await post(saml, relayState);
    assert.equal(again.status, 401);
    assert.equal(again.body.errorCode, 'GH-66013');
  });

  test('an unsigned response and a SHA-1 signed one are refused', async () => {
    const a = await start();
    const signed = Buffer.from(await respond(a.requestId, a.relayState), 'base64').toString();
    const unsigned = signed.replace(/<ds:Signature[\s\S]*?<\/ds:Signature>/g, '');
    assert.ok(!unsigned.includes('Signature>'));
    const r1 = await post(Buffer.from(unsigned).toString('base64'), a.relayState);
    assert.equal(r1.status, 401);
    assert.equal(r1.body.errorCode, 'GH-66011');

    const sha1Idp = makeIdp({ sigAlg: 'http://www.w3.org/2000/09/xmldsig#rsa-sha1' });
    const b = await start();
    const sha1 = await respond(b.requestId, b.relayState, {}, [], sha1Idp);
    assert.match(Buffer.from(sha1, 'base64').toString(), /rsa-sha1/);
    const r2 = await post(sha1, b.relayState);
    assert.equal(r2.status, 401);
    assert.equal(r2.body.errorCode, 'GH-66012');
  });

  test('expired assertion, wrong audience and a foreign signature are refused; small clock skew is accepted', async () => {
    const past = (ms: number) => new Date(Date.now() - ms).toISOString();
    const a = await start();
    const expired = await post(
      await respond(a.requestId, a.relayState, {
        ConditionsNotBefore: past(1_200_000),
        IssueInstant: past(1_200_000),
        ConditionsNotOnOrAfter: past(600_000),
        SubjectConfirmationDataNotOnOrAfter: past(600_000),
      }),
      a.relayState,
    );
    assert.equal(expired.status, 401);
    assert.equal(expired.body.errorCode, 'GH-66011');

    const b = await start();
    const aud = await post(
      await respond(b.requestId, b.relayState, { Audience: 'https://some-other-sp.example' }),
      b.relayState,
    );
    assert.equal(aud.status, 401);
    assert.match(aud.body.errors[0], /audience/i);

    const { generateKeyPairSync } = await import('node:crypto');
    const k = generateKeyPairSync('rsa', { modulusLength: 2048 })
      .privateKey.export({ type: 'pkcs8', format: 'pem' })
      .toString();
    const forger = samlify.IdentityProvider({
      entityID: 'https://idp.test/metadata',
      privateKey: k,
      signingCert: IDP_CERT,
      nameIDFormat: [EMAIL_FMT],
      singleSignOnService: [{ Binding: REDIRECT, Location: 'https://idp.test/sso' }],
      requestSignatureAlgorithm: 'http://www.w3.org/2001/04/xmldsig-more#rsa-sha256',
    });
    const c = await start();
    const forged = await post(await respond(c.requestId, c.relayState, {}, [], forger), c.relayState);
    assert.equal(forged.status, 401);

    const d = await start();
    const skewed = await post(
      await respond(d.requestId, d.relayState, { ConditionsNotBefore: new Date(Date.now() + 60_000).toISOString() }),
      d.relayState,
    );
    assert.equal(skewed.status, 302, JSON.stringify(skewed.body));
  });

  test('state: an unknown RelayState, a response for another request and a used state are refused', async () => {
    const a = await start();
    const saml = await respond(a.requestId, a.relayState);
    const unknown = await post(saml, 'not-a-state');
    assert.equal(unknown.status, 400);
    assert.equal(unknown.body.errorCode, 'GH-66009');
    const b = await start();
    const crossed = await post(saml, b.relayState);
    assert.equal(crossed.status, 401, 'InResponseTo of another request');
    const reuse = await post(await respond(b.requestId, b.relayState), b.relayState);
    assert.equal(reuse.status, 400, 'the state was burnt by the failed attempt');
  });

  test('pre-login: redirect not in the allow-list, unknown domain, excluded email', async () => {
    const bad = await t.call('POST', '/identity/resources/auth/v1/user/saml/prelogin', {
      body: { email: 'alice@acme.test', redirectUri: 'https://evil.example/steal' },
    });
    assert.equal(bad.status, 400);
    assert.equal(bad.body.errorCode, 'GH-66010');
    const none = await t.call('POST', '/identity/resources/auth/v2/user/sso/prelogin', {
      body: { email: 'bob@nowhere.test' },
    });
    assert.equal(none.status, 404);
    assert.equal(
      (
        await t.call('POST', '/team/resources/sso/v1/configurations/excluded-emails', {
          token: vendor,
          headers: h,
          body: { email: 'carol@acme.test' },
        })
      ).status,
      201,
    );
    assert.equal(
      (await t.call('POST', '/identity/resources/auth/v2/user/sso/prelogin', { body: { email: 'carol@acme.test' } }))
        .status,
      404,
    );
  });

  test('an assertion for an email outside the verified domains is refused', async () => {
    const a = await start();
    const r = await post(await respond(a.requestId, a.relayState, {}, [], idp, 'mallory@other.test'), a.relayState);
    assert.equal(r.status, 400);
    assert.equal(r.body.errorCode, 'GH-66005');
  });

  test('signed AuthnRequests: the IdP verifies our request signature with the SP metadata certificate', async () => {
    assert.equal(
      (
        await t.call('PATCH', `/team/resources/sso/v1/configurations/${configId}`, {
          token: vendor,
          headers: h,
          body: { signRequest: true },
        })
      ).status,
      200,
    );
    const md = await t.call('GET', '/team/resources/sso/v1/saml/configurations/sp-metadata', { headers: h });
    sp = samlify.ServiceProvider({ metadata: md.body as string });
    const strict = makeIdp({ wantSigned: true });
    const { requestId, relayState } = await start('dave@acme.test', strict);
    assert.ok(requestId);
    const ok = await post(await respond(requestId, relayState, {}, [], strict, 'dave@acme.test'), relayState);
    assert.equal(ok.status, 302);
    await assert.rejects(
      strict.parseLoginRequest(sp, 'redirect', {
        query: { SAMLRequest: 'x', SigAlg: 'y', Signature: 'z' },
        octetString: 'SAMLRequest=x',
      } as never),
    );
  });

  test('configuration management: account admin permission, default roles, DNS validation with a local resolver', async () => {
    const noPerm = await t.userToken({ tenantId: TENANT, permissions: [] });
    assert.equal((await t.call('GET', '/team/resources/sso/v1/configurations', { token: noPerm })).status, 403);
    // The account's admin: default roles it sets must be within its own roles (the admin role, every fe.* permission).
    const admin = await t.userToken({ tenantId: TENANT, roles: ['admin'], permissions: ['fe.*'] });
    const made = await t.call('POST', '/identity/resources/sso/v1/configurations', {
      token: admin,
      body: { type: 'saml', ssoEndpoint: 'https://idp2.test/sso', publicCertificate: IDP_CERT, signRequest: false },
    });
    assert.equal(made.status, 201, JSON.stringify(made.body));
    assert.equal(
      (
        await t.call('POST', '/identity/resources/sso/v1/configurations', {
          token: admin,
          body: { type: 'saml', publicCertificate: 'not a cert' },
        })
      ).status,
      400,
    );
    const roles = await t.call('PUT', `/team/resources/sso/v1/configurations/${made.body.id}/roles`, {
      token: admin,
      body: { roleIds: [adminRoleId] },
    });
    assert.equal(roles.status, 201);
    assert.deepEqual(
      (await t.call('GET', `/team/resources/sso/v1/configurations/${made.body.id}/roles`, { token: admin })).body
        .roleIds,
      [adminRoleId],
    );
    const dom = await t.call('POST', `/team/resources/sso/v1/configurations/${made.body.id}/domains`, {
      token: admin,
      body: { domain: 'dns.acme.test' },
    });
    const records: Record<string, string[][]> = {};
    t.ctx.sso.configs.useTxtResolver(async (name) => records[name] ?? []);
    const path = `/team/resources/sso/v2/configurations/${made.body.id}/domains/${dom.body.id}/validate`;
    const missing = await t.call('PUT', path, { token: admin });
    assert.equal(missing.status, 400);
    assert.equal(missing.body.errorCode, 'GH-66005');
    records['dns.acme.test'] = [['v=spf1 -all'], [dom.body.txtRecord.slice(0, 10), dom.body.txtRecord.slice(10)]];
    const ok = await t.call('PUT', path, { token: admin });
    assert.equal(ok.status, 200);
    assert.equal(ok.body.validated, true);
    assert.equal(
      (
        await t.call('PUT', '/team/resources/sso/v1/configurations/domains/acme.test/force-validate', {
          token: admin,
          body: {},
        })
      ).status,
      403,
    );
  });
});
