import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import * as samlify from 'samlify';
import { startBrowserSdk } from '../helpers/sdk.ts';

// SAML SSO through the browser SDK: preLogin / preLoginWithIdpType, then postLogin with the IdP's signed answer.
samlify.setSchemaValidator({ validate: async () => 'skipped' });
const FIX = join(import.meta.dirname, '..', 'fixtures', 'sso');
const EMAIL_FMT = 'urn:oasis:names:tc:SAML:1.1:nameid-format:emailAddress';
const TENANT = 'sso-acme';
const idp = samlify.IdentityProvider({
  entityID: 'https://idp.test/metadata',
  privateKey: readFileSync(join(FIX, 'idp-key.pem'), 'utf8'),
  signingCert: readFileSync(join(FIX, 'idp-cert.pem'), 'utf8'),
  nameIDFormat: [EMAIL_FMT],
  singleSignOnService: [
    { Binding: 'urn:oasis:names:tc:SAML:2.0:bindings:HTTP-Redirect', Location: 'https://idp.test/sso' },
  ],
  requestSignatureAlgorithm: 'http://www.w3.org/2001/04/xmldsig-more#rsa-sha256',
  wantAuthnRequestsSigned: false,
});
let s: Awaited<ReturnType<typeof startBrowserSdk>>;
let sp: ReturnType<typeof samlify.ServiceProvider>;

before(async () => {
  s = await startBrowserSdk();
  await s.account(TENANT, 'Acme');
  const h = { 'gatehouse-tenant-id': TENANT };
  const C = '/team/resources/sso/v1/configurations';
  const metadata = idp.getMetadata();
  const created = await s.t.call('POST', `${C}/metadata`, { token: s.vendor, headers: h, body: { metadata } });
  assert.equal(created.status, 201, JSON.stringify(created.body));
  const domain = { domain: 'sso.test' };
  const dom = await s.t.call('POST', `${C}/${created.body.id}/domains`, { token: s.vendor, headers: h, body: domain });
  assert.equal(dom.status, 201, JSON.stringify(dom.body));
  const ok = await s.t.call('PUT', `${C}/domains/sso.test/force-validate`, { token: s.vendor, body: {} });
  assert.equal(ok.status, 200);
  const md = await s.t.call('GET', '/team/resources/sso/v1/saml/configurations/sp-metadata', { headers: h });
  sp = samlify.ServiceProvider({ metadata: md.body as string });
});
after(async () => s?.t.close());

/** The IdP reads the AuthnRequest in the address and answers a signed response for the email. */
async function idpAnswer(address: string, email: string) {
  const url = new URL(address);
  const query = Object.fromEntries(url.searchParams);
  const octetString = url.search
    .slice(1)
    .split('&')
    .filter((p) => !p.startsWith('Signature='))
    .join('&');
  const parsed = await idp.parseLoginRequest(sp, 'redirect', { query, octetString } as never);
  const requestId = parsed.extract.request!.id as string;
  const acs = sp.entityMeta.getAssertionConsumerService('urn:oasis:names:tc:SAML:2.0:bindings:HTTP-POST') as string;
  const now = Date.now();
  const request = { extract: { request: { id: requestId } } } as never;
  const res = await idp.createLoginResponse(
    sp,
    request,
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
          AttributeStatement: '',
        };
        const lib = samlify.SamlLib ?? (samlify as unknown as { default: typeof samlify }).default.SamlLib;
        return { id: tv.ID, context: lib.replaceTagsByValue(template, tv) };
      },
    },
  );
  return { SAMLResponse: res.context as string, RelayState: query.RelayState };
}

describe('SSO through the browser SDK', () => {
  test('preLoginWithIdpType names the IdP address and its type; preLogin the address', async () => {
    const r = await s.sdk.api.auth.preLoginWithIdpType({ email: 'alice@sso.test' });
    assert.equal(r?.idpType, 'saml');
    assert.equal(new URL(r!.address).origin, 'https://idp.test');
    const address = await s.sdk.api.auth.preLogin({ email: 'alice@sso.test' });
    assert.equal(new URL(address!).pathname, '/sso');
    assert.equal(await s.sdk.api.auth.preLogin({ email: 'bob@nowhere.test' }), null, 'no IdP for the domain');
  });

  test('postLogin with the IdP answer signs the user in (provisioned just in time)', async () => {
    const address = await s.sdk.api.auth.preLogin({ email: 'alice@sso.test' });
    const user = await s.sdk.api.auth.postLogin(await idpAnswer(address!, 'alice@sso.test'));
    assert.equal(user.email, 'alice@sso.test');
    assert.ok(user.accessToken);
    assert.equal(user.mfaRequired, false);
    assert.equal(user.tenantId, TENANT);
    assert.equal((await s.sdk.api.auth.getMeV2()).email, 'alice@sso.test');
    const refreshed = await s.sdk.api.auth.refreshTokenV3();
    assert.equal(refreshed.activeTenant?.tenantId, TENANT);
  });
});
