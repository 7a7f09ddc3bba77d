import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import * as samlify from 'samlify';
import { startTestApp, type TestApp } from '../helpers/harness.ts';
import { account } from '../fixtures/builders.ts';

/**
 * The older admin-portal SSO paths (one SAML configuration per account, /v2/saml groups, the public view) and the
 * environment's OIDC SSO settings, over the same SSO configurations the current routes manage.
 */
samlify.setSchemaValidator({ validate: async () => 'skipped' });
const FIX = join(import.meta.dirname, '..', 'fixtures', 'sso');
const IDP_KEY = readFileSync(join(FIX, 'idp-key.pem'), 'utf8');
const IDP_CERT = readFileSync(join(FIX, 'idp-cert.pem'), 'utf8');
const idp = samlify.IdentityProvider({
  entityID: 'https://legacy-idp.test/metadata',
  privateKey: IDP_KEY,
  signingCert: IDP_CERT,
  nameIDFormat: ['urn:oasis:names:tc:SAML:1.1:nameid-format:emailAddress'],
  singleSignOnService: [
    { Binding: 'urn:oasis:names:tc:SAML:2.0:bindings:HTTP-Redirect', Location: 'https://legacy-idp.test/sso' },
  ],
});
const TENANT = 'legacy-saml';
const OTHER = 'legacy-meta';
const APP_CB = 'https://app.example/account/oidc/callback';
const T = '/team/resources/sso';
const I = '/identity/resources/sso';

describe('SSO: older admin-portal paths and OIDC settings', () => {
  let t: TestApp;
  let vendor: string;
  let admin: string;
  let roleId: string;
  const records: Record<string, string[][]> = {};

  before(async () => {
    t = await startTestApp();
    vendor = await t.vendorToken();
    for (const [tenantId, name] of [
      [TENANT, 'Legacy'],
      [OTHER, 'Meta'],
    ])
      await account(t, { id: tenantId, name });
    assert.ok(
      (
        await t.call('POST', '/identity/resources/configurations/v1', {
          token: vendor,
          body: { allowedRedirectUrls: [APP_CB] },
        })
      ).status < 300,
    );
    const role = await t.call('POST', '/identity/resources/roles/v1', {
      token: vendor,
      body: [{ key: 'legacy-admin', name: 'Legacy admin', level: 1 }],
    });
    roleId = (Array.isArray(role.body) ? role.body[0] : role.body).id;
    // The account's admin: the roles its SSO configuration gives must be within its own (grant rule of the roles module).
    admin = await t.userToken({
      tenantId: TENANT,
      roles: ['admin'],
      permissions: ['fe.secure.read.samlConfiguration', 'fe.secure.write.samlConfiguration'],
    });
    t.ctx.sso.configs.useTxtResolver(async (name) => records[name] ?? []);
  });
  after(() => t.close());

  test('before any configuration: empty roles and groups, inactive public view; writes need a configuration and the permission', async () => {
    assert.deepEqual((await t.call('GET', `${T}/v1/saml/configurations/roles/default`, { token: admin })).body, {
      roleIds: [],
    });
    assert.deepEqual((await t.call('GET', `${T}/v2/saml/configurations/groups`, { token: admin })).body, []);
    assert.deepEqual((await t.call('GET', `${T}/v2/configurations/public?tenantId=${TENANT}`)).body, {
      isActive: false,
    });
    const noConfig = await t.call('POST', `${T}/v2/saml/configurations/groups`, {
      token: admin,
      body: { group: 'admins', roleIds: [roleId] },
    });
    assert.equal(noConfig.status, 404);
    assert.equal(noConfig.body.errorCode, 'GH-66001');
    const reader = await t.userToken({ tenantId: TENANT, permissions: ['fe.secure.read.samlConfiguration'] });
    assert.equal(
      (await t.call('POST', `${T}/v1/saml/configurations`, { token: reader, body: { enabled: true } })).status,
      403,
    );
  });

  test('POST saml/configurations creates the configuration with its one domain; a new domain replaces it; bad input changes nothing', async () => {
    const made = await t.call('POST', `${T}/v1/saml/configurations`, {
      token: admin,
      body: {
        enabled: true,
        domain: 'Legacy.test',
        ssoEndpoint: 'https://legacy-idp.test/sso',
        publicCertificate: IDP_CERT,
        signRequest: false,
        acsUrl: 'ignored',
      },
    });
    assert.equal(made.status, 201, JSON.stringify(made.body));
    assert.equal(made.body.domain, 'legacy.test');
    assert.equal(made.body.validated, false);
    assert.match(made.body.generatedVerification, /^gatehouse-site-verification=/);
    assert.equal(made.body.type, 'saml');
    const got = await t.call('GET', `${T}/v1/saml/configurations`, { token: admin });
    assert.equal(got.body.id, made.body.id);

    const same = await t.call('POST', `${I}/v1/saml/configurations`, {
      token: admin,
      body: { enabled: true, domain: 'legacy.test', signRequest: true },
    });
    assert.equal(same.status, 201);
    assert.equal(same.body.id, made.body.id, 'one SAML configuration per account: updated, not duplicated');
    assert.equal(same.body.generatedVerification, made.body.generatedVerification, 'the same domain keeps its claim');
    assert.equal(same.body.signRequest, true);

    const bad = await t.call('POST', `${T}/v1/saml/configurations`, {
      token: admin,
      body: { domain: 'new.legacy.test', publicCertificate: 'not a certificate' },
    });
    assert.equal(bad.status, 400);
    const badDomain = await t.call('POST', `${T}/v1/saml/configurations`, {
      token: admin,
      body: { domain: 'not a domain', signRequest: false },
    });
    assert.equal(badDomain.status, 400);
    let now = await t.call('GET', `${T}/v1/configurations`, { token: admin });
    assert.equal(now.body.length, 1);
    assert.deepEqual(
      now.body[0].domains.map((d: { domain: string }) => d.domain),
      ['legacy.test'],
      'the refused requests claimed nothing',
    );
    assert.equal(now.body[0].signRequest, true, 'and changed nothing');

    const moved = await t.call('POST', `${T}/v1/saml/configurations`, {
      token: admin,
      body: { enabled: true, domain: 'corp.legacy.test', signRequest: false },
    });
    assert.equal(moved.status, 201);
    assert.equal(moved.body.domain, 'corp.legacy.test');
    now = await t.call('GET', `${T}/v1/configurations`, { token: admin });
    assert.deepEqual(
      now.body[0].domains.map((d: { domain: string }) => d.domain),
      ['corp.legacy.test'],
    );
  });

  test('PUT saml/validations/domain (no body) validates the domain by DNS; pre-login then routes the domain to the IdP', async () => {
    const put = () =>
      t.call('PUT', `${T}/v1/saml/validations/domain`, {
        token: admin,
        headers: { 'content-type': 'application/json' },
      });
    const missing = await put();
    assert.equal(missing.status, 400, JSON.stringify(missing.body));
    assert.equal(missing.body.errorCode, 'GH-66005');
    const prelogin = () =>
      t.call('POST', '/identity/resources/auth/v1/user/saml/prelogin', { body: { email: 'ann@corp.legacy.test' } });
    assert.equal((await prelogin()).status, 404);
    const cfg = (await t.call('GET', `${T}/v1/saml/configurations`, { token: admin })).body;
    records['corp.legacy.test'] = [[cfg.domains[0].txtRecord]];
    const ok = await put();
    assert.equal(ok.status, 200, JSON.stringify(ok.body));
    assert.equal(ok.body.validated, true);
    assert.equal(ok.body.domain, 'corp.legacy.test');
    const routed = await prelogin();
    assert.equal(routed.status, 200, JSON.stringify(routed.body));
    assert.equal(routed.body.type, 'saml');
    assert.equal(new URL(routed.body.address).origin, 'https://legacy-idp.test');
    assert.deepEqual((await t.call('GET', `${I}/v2/configurations/public`, { token: admin })).body, { isActive: true });
  });

  test('PUT saml/configurations/metadata fills the configuration from IdP metadata, and makes one for an account without', async () => {
    const own = await t.call('PUT', `${T}/v1/saml/configurations/metadata`, {
      token: admin,
      body: { metadata: idp.getMetadata() },
    });
    assert.equal(own.status, 200, JSON.stringify(own.body));
    assert.equal(own.body.idpEntityId, 'https://legacy-idp.test/metadata');
    assert.equal(own.body.domain, 'corp.legacy.test');
    assert.equal((await t.call('GET', `${T}/v1/configurations`, { token: admin })).body.length, 1);

    const h = { 'gatehouse-tenant-id': OTHER };
    const made = await t.call('PUT', `${I}/v1/saml/configurations/metadata`, {
      token: vendor,
      headers: h,
      body: { metadata: idp.getMetadata() },
    });
    assert.equal(made.status, 200);
    assert.equal(made.body.tenantId, OTHER);
    assert.equal(made.body.ssoEndpoint, 'https://legacy-idp.test/sso');
    assert.equal(made.body.domain, '');
    const bad = await t.call('PUT', `${T}/v1/saml/configurations/metadata`, {
      token: vendor,
      headers: h,
      body: { metadata: '<nope/>' },
    });
    assert.equal(bad.status, 400);
    const noDomain = await t.call('PUT', `${T}/v1/saml/validations/domain`, { token: vendor, headers: h });
    assert.equal(noDomain.status, 404);
    assert.equal(noDomain.body.errorCode, 'GH-66003');
    assert.equal(
      (await t.call('PUT', `${T}/v1/saml/validations/domain`, { token: vendor })).status,
      400,
      'a vendor token names the account',
    );
  });

  test('default roles and v2 group mappings act on the SAML configuration', async () => {
    const set = await t.call('POST', `${T}/v1/saml/configurations/roles/default`, {
      token: admin,
      body: { roleIds: [roleId] },
    });
    assert.equal(set.status, 201, JSON.stringify(set.body));
    assert.deepEqual((await t.call('GET', `${I}/v1/saml/configurations/roles/default`, { token: admin })).body, {
      roleIds: [roleId],
    });
    assert.equal(
      (
        await t.call('POST', `${T}/v1/saml/configurations/roles/default`, {
          token: admin,
          body: { roleIds: ['no-such-role'] },
        })
      ).status >= 400,
      true,
    );
    assert.deepEqual((await t.call('GET', `${T}/v1/saml/configurations`, { token: admin })).body.roleIds, [roleId]);

    const G = `${T}/v2/saml/configurations/groups`;
    const g = await t.call('POST', G, { token: admin, body: { group: 'engineering', roleIds: [roleId] } });
    assert.equal(g.status, 201, JSON.stringify(g.body));
    assert.equal((await t.call('POST', G, { token: admin, body: { group: 'engineering', roleIds: [] } })).status, 409);
    const changed = await t.call('PATCH', `${G}/${g.body.id}`, { token: admin, body: { group: 'eng', roleIds: [] } });
    assert.equal(changed.status, 200);
    assert.equal(changed.body.group, 'eng');
    const cfg = (await t.call('GET', `${T}/v1/saml/configurations`, { token: admin })).body;
    assert.deepEqual(
      (await t.call('GET', `${T}/v1/configurations/${cfg.id}/groups`, { token: admin })).body.map(
        (x: { group: string }) => x.group,
      ),
      ['eng'],
    );
    assert.deepEqual(
      (await t.call('GET', G, { token: admin })).body.map((x: { id: string }) => x.id),
      [g.body.id],
    );
    assert.equal((await t.call('DELETE', `${G}/${g.body.id}`, { token: admin })).status, 200);
    const gone = await t.call('DELETE', `${G}/${g.body.id}`, { token: admin });
    assert.equal(gone.status, 404);
    assert.equal(gone.body.errorCode, 'GH-66006');
    assert.deepEqual((await t.call('GET', G, { token: admin })).body, []);
  });

  test('public view: by tenantId, tenant header or user token; it needs one of them', async () => {
    assert.deepEqual(
      (await t.call('GET', `${T}/v2/configurations/public`, { headers: { 'gatehouse-tenant-id': OTHER } })).body,
      { isActive: true },
    );
    assert.deepEqual((await t.call('GET', `${T}/v2/configurations/public?tenantId=nobody`)).body, { isActive: false });
    const none = await t.call('GET', `${T}/v2/configurations/public`);
    assert.equal(none.status, 400);
    assert.equal(none.body.errorCode, 'GH-20006');
  });

  test('OIDC settings: vendor writes, the redirect page must be allow-listed, both prefixes read the same', async () => {
    assert.deepEqual((await t.call('GET', `${T}/v1/oidc/configurations`, { token: vendor })).body, {
      active: false,
      redirectUri: '',
    });
    const set = await t.call('POST', `${T}/v1/oidc/configurations`, {
      token: vendor,
      body: { active: true, redirectUri: APP_CB },
    });
    assert.equal(set.status, 201, JSON.stringify(set.body));
    assert.deepEqual(set.body, { active: true, redirectUri: APP_CB });
    const evil = await t.call('POST', `${T}/v1/oidc/configurations`, {
      token: vendor,
      body: { active: false, redirectUri: 'https://evil.example/cb' },
    });
    assert.equal(evil.status, 400);
    assert.equal(evil.body.errorCode, 'GH-66010');
    assert.equal(
      (await t.call('POST', `${T}/v1/oidc/configurations`, { token: vendor, body: { redirectUri: APP_CB } })).status,
      400,
      'active is required',
    );
    assert.equal(
      (await t.call('POST', `${T}/v1/oidc/configurations`, { token: admin, body: { active: false } })).status,
      403,
    );
    assert.deepEqual(
      (await t.call('GET', `${I}/v1/oidc/configurations`, { token: admin })).body,
      { active: true, redirectUri: APP_CB },
      'refused writes changed nothing',
    );
    const off = await t.call('POST', `${I}/v1/oidc/configurations`, { token: vendor, body: { active: false } });
    assert.deepEqual(off.body, { active: false, redirectUri: APP_CB }, 'an omitted redirectUri is kept');
    // The multiple-SSO settings share the settings document and are untouched.
    assert.equal(
      (await t.call('GET', `${T}/v1/configurations/multiple-sso-per-domain`, { token: vendor })).body.active,
      false,
    );
  });
});
