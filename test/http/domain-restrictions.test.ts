import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startTestApp, type TestApp } from '../helpers/harness.ts';
import { account } from '../fixtures/builders.ts';

let t: TestApp;
let vendor: string;
const D = '/identity/resources/configurations/restrictions/v1/email-domain';
const U = '/identity/resources/users/v1';

/** An environment call; with `tenantId`, on that account. */
const v = (method: string, url: string, body?: unknown, tenantId?: string) =>
  t.call(method, url, { token: vendor, body, headers: tenantId ? { 'gatehouse-tenant-id': tenantId } : {} });
const createUser = (tenantId: string, email: string) => v('POST', U, { email }, tenantId);

before(async () => {
  t = await startTestApp();
  vendor = await t.vendorToken();
  await account(t, { id: 'dr-acme' });
  await account(t, { id: 'dr-beta' });
});
after(async () => t?.close());

describe('email-domain restrictions', () => {
  test('the environment and each account start with restrictions off and no domains', async () => {
    for (const tenantId of [undefined, 'dr-acme']) {
      const c = await v('GET', `${D}/config`, undefined, tenantId);
      assert.equal(c.status, 200);
      assert.deepEqual(c.body, { active: false, listType: 'BLOCK', blockPublicDomains: false });
      const list = await v('GET', D, undefined, tenantId);
      assert.deepEqual(list.body.items, []);
      assert.deepEqual(list.body._metadata, { totalItems: 0, totalPages: 0 });
    }
    assert.equal((await v('GET', `${D}/config`, undefined, 'dr-nowhere')).status, 404);
  });

  test('domains are checked and normalised; a bad one is a 400 naming the field', async () => {
    for (const [domain, re] of [
      ['not a domain', /domain "not a domain" is not a domain name/],
      ['acme', /at least one dot/],
      ['-acme.com', /not a domain name/],
      ['a..b', /not a domain name/],
    ] as const) {
      const r = await v('POST', D, { domain, type: 'BLOCK' });
      assert.equal(r.status, 400, domain);
      assert.match(r.body.errors[0], re);
    }
    assert.equal((await v('POST', D, { domain: 'spam.test' })).status, 400, 'type is required');
    assert.equal((await v('POST', D, { domain: 'spam.test', type: 'MAYBE' })).status, 400);
    const r = await v('POST', D, { domain: '@Spam.TEST', type: 'BLOCK' });
    assert.equal(r.status, 201, JSON.stringify(r.body));
    assert.deepEqual(Object.keys(r.body).sort(), ['domain', 'id', 'type']);
    assert.equal(r.body.domain, 'spam.test');
    const idn = await v('POST', D, { domain: 'bücher.example', type: 'BLOCK' });
    assert.equal(idn.body.domain, 'xn--bcher-kva.example');
    const dup = await v('POST', D, { domain: 'SPAM.test', type: 'BLOCK' });
    assert.equal(dup.status, 409);
    assert.equal(dup.body.errorCode, 'GH-65010');
    const bad = await v('POST', `${D}/replace-bulk`, { type: 'ALLOW', domains: ['fine.test', 'not valid'] });
    assert.equal(bad.status, 400);
    assert.match(bad.body.errors[0], /domains\[1\] "not valid"/);
  });

  test('environment block list: users created with a blocked domain (or a subdomain of it) are refused', async () => {
    assert.equal((await createUser('dr-acme', 'before@spam.test')).status, 201, 'inactive: no effect');
    const on = await v('POST', `${D}/config`, { active: true });
    assert.equal(on.status, 201);
    assert.deepEqual(on.body, { active: true, listType: 'BLOCK', blockPublicDomains: false });
    for (const email of ['x@spam.test', 'x@eng.spam.test', 'x@SPAM.test']) {
      const r = await createUser('dr-acme', email);
      assert.equal(r.status, 403, email);
      assert.equal(r.body.errorCode, 'GH-65009');
      assert.match(
        r.body.errors[0],
        /email: spam\.test is a blocked email domain of the environment|email: eng\.spam\.test is a blocked/,
      );
    }
    assert.equal(
      (await createUser('dr-acme', 'x@notspam.test')).status,
      201,
      'only the domain and its subdomains match',
    );
    const found = await v('GET', '/identity/resources/users/v2?_email=x@spam.test', undefined, 'dr-acme');
    assert.equal(found.status, 200);
    assert.deepEqual(found.body.items, [], 'nothing was created');
  });

  test('blockPublicDomains refuses free-mail domains', async () => {
    const c = await v('POST', `${D}/config`, { active: true, blockPublicDomains: true });
    assert.deepEqual(c.body, { active: true, listType: 'BLOCK', blockPublicDomains: true });
    const r = await createUser('dr-beta', 'someone@gmail.com');
    assert.equal(r.status, 403);
    assert.match(r.body.errors[0], /does not accept public email domains \(gmail\.com\)/);
    assert.equal((await createUser('dr-beta', 'someone@beta.test')).status, 201);
    assert.equal((await v('POST', `${D}/config`, { active: false })).status, 201);
    assert.equal((await v('GET', `${D}/config`)).body.blockPublicDomains, true, 'fields left out keep their value');
  });

  test('an account allow list: only its domains join that account; other accounts are not affected', async () => {
    const empty = await v('POST', `${D}/config`, { active: true, type: 'ALLOW' }, 'dr-acme');
    assert.equal(empty.status, 409, 'an active, empty allow list would refuse everyone');
    assert.equal(empty.body.errorCode, 'GH-65008');
    assert.match(empty.body.errors[0], /would be empty while the allow list is active/);
    const put = await v(
      'POST',
      `${D}/replace-bulk`,
      { type: 'ALLOW', domains: ['corp.acme.test', 'acme.test', 'Acme.Test'] },
      'dr-acme',
    );
    assert.equal(put.status, 201);
    assert.deepEqual(
      put.body.map((d: any) => [d.domain, d.type]),
      [
        ['acme.test', 'ALLOW'],
        ['corp.acme.test', 'ALLOW'],
      ],
    );
    const on = await v('POST', `${D}/config`, { active: true, type: 'ALLOW' }, 'dr-acme');
    assert.equal(on.status, 201);
    assert.deepEqual(on.body, { active: true, listType: 'ALLOW', blockPublicDomains: false });

    const refused = await createUser('dr-acme', 'y@other.test');
    assert.equal(refused.status, 403);
    assert.match(refused.body.errors[0], /other\.test is not on the allowed email domains of account dr-acme/);
    assert.equal((await createUser('dr-acme', 'y@acme.test')).status, 201);
    assert.equal(
      (await createUser('dr-acme', 'y@uk.acme.test')).status,
      201,
      'subdomains of an allowed domain are allowed',
    );
    const beta = await createUser('dr-beta', 'y@other.test');
    assert.equal(beta.status, 201, 'the account rule applies to that account only');
    // An existing user joining the account is checked too.
    const join = await v('POST', `${U}/${beta.body.id}/tenant`, { tenantId: 'dr-acme' });
    assert.equal(join.status, 403);
    assert.equal(join.body.errorCode, 'GH-65009');
    // The environment lists stay separate from the account's.
    assert.deepEqual((await v('GET', D)).body.items.map((d: any) => d.domain).sort(), [
      'spam.test',
      'xn--bcher-kva.example',
    ]);
    assert.equal((await v('GET', D, undefined, 'dr-acme')).body._metadata.totalItems, 2);
  });

  test('deleting: the last allowed domain of an active allow list cannot go; unknown ids are a 404', async () => {
    const list = (await v('GET', D, undefined, 'dr-acme')).body.items;
    const first = await v('DELETE', `${D}/${list[0].id}`, undefined, 'dr-acme');
    assert.equal(first.status, 200);
    assert.equal(first.body.domain, 'acme.test');
    const last = await v('DELETE', `${D}/${list[1].id}`, undefined, 'dr-acme');
    assert.equal(last.status, 409);
    assert.equal(last.body.errorCode, 'GH-65008');
    assert.equal((await v('POST', `${D}/replace-bulk`, { type: 'ALLOW', domains: [] }, 'dr-acme')).status, 409);
    assert.equal((await v('DELETE', `${D}/${list[0].id}`, undefined, 'dr-acme')).status, 404);
    const wrongScope = await v('DELETE', `${D}/${list[1].id}`);
    assert.equal(wrongScope.status, 404, "an account's rule is not the environment's");
    assert.equal(wrongScope.body.errorCode, 'GH-65011');
  });

  test('user tokens act on their own account with the security-policy permissions', async () => {
    const admin = await t.userToken({
      tenantId: 'dr-beta',
      permissions: ['fe.secure.read.securityPolicy', 'fe.secure.write.securityPolicy'],
    });
    const r = await t.call('POST', D, {
      token: admin,
      body: { domain: 'rival.test', type: 'BLOCK' },
      headers: { 'gatehouse-tenant-id': 'dr-acme' },
    });
    assert.equal(r.status, 201);
    assert.deepEqual(
      (await v('GET', D, undefined, 'dr-beta')).body.items.map((d: any) => d.domain),
      ['rival.test'],
      "stored on the token's account",
    );
    const reader = await t.userToken({ tenantId: 'dr-beta', permissions: ['fe.secure.read.securityPolicy'] });
    assert.equal((await t.call('GET', `${D}/config`, { token: reader })).status, 200);
    assert.equal((await t.call('POST', `${D}/config`, { token: reader, body: { active: true } })).status, 403);
  });

  test('removing an account removes its domain rules', async () => {
    await account(t, { id: 'dr-doomed' });
    assert.equal((await v('POST', D, { domain: 'x.test', type: 'BLOCK' }, 'dr-doomed')).status, 201);
    assert.equal((await t.call('DELETE', '/tenants/resources/tenants/v1/dr-doomed', { token: vendor })).status, 200);
    await account(t, { id: 'dr-doomed' });
    assert.equal((await v('GET', D, undefined, 'dr-doomed')).body._metadata.totalItems, 0);
  });
});
