import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startTestApp, type TestApp } from '../helpers/harness.ts';
import { account, user } from '../fixtures/builders.ts';

// Requests of standard SCIM test clients and Microsoft Entra's request collection that a strict reading of RFC 7643
// and 7644 must accept: userName is any unique string, attribute names are case-insensitive, a primary value may be
// no address, group members carry their display names, every write moves the connection's lastSync.

let t: TestApp;
let vendor: string;
const C = '/directory/resources/v1/configurations/scim2';
const S = '/directory/resources/scim/v2.0';
const USER = 'urn:ietf:params:scim:schemas:core:2.0:User';
const GROUP = 'urn:ietf:params:scim:schemas:core:2.0:Group';
const hdr = { 'gatehouse-tenant-id': 'sc-entra' };
let conn: { id: string; token: string };

before(async () => {
  t = await startTestApp();
  vendor = await t.vendorToken();
  await account(t, { id: 'sc-entra', name: 'Entra' });
  conn = (
    await t.call('POST', C, { token: vendor, headers: hdr, body: { source: 'azure-ad', syncToUserManagement: true } })
  ).body;
});
after(async () => t?.close());

async function scim(method: string, path: string, body?: unknown) {
  const res = await t.app.inject({
    method: method as 'GET',
    url: `${S}/${conn.id}${path}`,
    headers: { authorization: `Bearer ${conn.token}`, 'content-type': 'application/scim+json' },
    payload: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: res.statusCode, body: res.body ? JSON.parse(res.body) : undefined };
}

const gatehouseUser = async (email: string) =>
  (
    await t.call('GET', `/identity/resources/users/v2?_email=${encodeURIComponent(email)}`, {
      token: vendor,
      headers: hdr,
    })
  ).body.items[0];

describe('userName and emails (sync to user management on)', () => {
  test('a userName that is no address takes the user email from emails', async () => {
    const r = await scim('POST', '/Users', {
      schemas: [USER],
      userName: 'UserName111',
      emails: [{ value: 'user111@entra.test', type: 'work' }],
    });
    assert.equal(r.status, 201, JSON.stringify(r.body));
    assert.equal(r.body.userName, 'UserName111');
    const u = await gatehouseUser('user111@entra.test');
    assert.ok(u, 'the Gatehouse user has the address from emails');
  });

  test('"Primary" in any case on a value that is no address: the first valid address is used, every value kept', async () => {
    const r = await scim('POST', '/Users', {
      schemas: [USER],
      userName: 'UserName357',
      Emails: [
        { Primary: true, Type: 'work', Value: 'emailName357' },
        { Primary: 'False', Type: 'home', Value: 'home357@entra.test' },
      ],
    });
    assert.equal(r.status, 201, JSON.stringify(r.body));
    assert.deepEqual(
      r.body.emails.map((e: any) => e.value),
      ['emailName357', 'home357@entra.test'],
    );
    assert.equal(r.body.emails[0].primary, true);
    assert.ok(await gatehouseUser('home357@entra.test'));
  });

  test('no address at all: 400 invalidValue in the SCIM error body, nothing stored', async () => {
    const r = await scim('POST', '/Users', {
      schemas: [USER],
      userName: 'NoMail1',
      emails: [{ value: 'not-an-address' }],
    });
    assert.equal(r.status, 400, JSON.stringify(r.body));
    assert.equal(r.body.scimType, 'invalidValue');
    assert.match(r.body.detail, /email/);
    const list = await scim('GET', `/Users?filter=${encodeURIComponent('userName eq "NoMail1"')}`);
    assert.equal(list.body.totalResults, 0);
  });
});

describe('groups and lastSync', () => {
  test('a group read back names its members (display)', async () => {
    const u = await scim('POST', '/Users', {
      schemas: [USER],
      userName: 'member1@entra.test',
      displayName: 'Member One',
      emails: [{ value: 'member1@entra.test', primary: true }],
    });
    const bare = await scim('POST', '/Users', { schemas: [USER], userName: 'member2@entra.test' });
    assert.equal(u.status, 201);
    assert.equal(bare.status, 201);
    const g = await scim('POST', '/Groups', {
      schemas: [GROUP],
      displayName: 'Group One',
      members: [{ value: u.body.id }, { value: bare.body.id }],
    });
    assert.equal(g.status, 201, JSON.stringify(g.body));
    const read = await scim('GET', `/Groups/${g.body.id}`);
    const byId = new Map(read.body.members.map((m: any) => [m.value, m.display]));
    assert.equal(byId.get(u.body.id), 'Member One');
    assert.equal(byId.get(bare.body.id), 'member2@entra.test');
  });

  test('DELETE /Users/{id} moves lastSync, even right after another write', async () => {
    const u = await scim('POST', '/Users', { schemas: [USER], userName: 'gone@entra.test' });
    assert.equal(u.status, 201);
    const before = (await t.call('GET', `${C}/${conn.id}`, { token: vendor, headers: hdr })).body.lastSync;
    await new Promise((r) => setTimeout(r, 20));
    assert.equal((await scim('DELETE', `/Users/${u.body.id}`)).status, 204);
    const afterDelete = (await t.call('GET', `${C}/${conn.id}`, { token: vendor, headers: hdr })).body.lastSync;
    assert.ok(Date.parse(afterDelete) > Date.parse(before), `${afterDelete} after ${before}`);
  });
});

describe('password (writeOnly, returned never; sync to user management on)', () => {
  const signIn = (email: string, password: string) =>
    t.call('POST', '/identity/resources/auth/v1/user', { body: { email, password } });
  const PW = 'Dir3ctory-Set-Pass!';

  test('a user provisioned with a password signs in with it; the password is never stored or returned', async () => {
    const r = await scim('POST', '/Users', {
      schemas: [USER],
      userName: 'PwUser1',
      emails: [{ value: 'pw1@entra.test' }],
      password: PW,
    });
    assert.equal(r.status, 201, JSON.stringify(r.body));
    assert.equal(JSON.stringify(r.body).includes(PW), false);
    const read = await scim('GET', `/Users/${r.body.id}`);
    assert.equal(JSON.stringify(read.body).includes(PW), false);
    const stored = await t.db.query<{ data: unknown }>('SELECT data FROM scim_users WHERE id = $1', [r.body.id]);
    assert.equal(JSON.stringify(stored.rows[0].data).toLowerCase().includes('password'), false);
    const ok = await signIn('pw1@entra.test', PW);
    assert.equal(ok.status, 200, JSON.stringify(ok.body));
    assert.ok(ok.body.accessToken);
    assert.equal((await signIn('pw1@entra.test', 'Wrong-Pass-123!')).status, 401);
  });

  test('PATCH and PUT with a new password change it for a user the connection owns', async () => {
    const r = await scim('POST', '/Users', { schemas: [USER], userName: 'pw2@entra.test', password: PW });
    assert.equal(r.status, 201, JSON.stringify(r.body));
    const next = 'Rotated-By-Directory-2!';
    const p = await scim('PATCH', `/Users/${r.body.id}`, {
      schemas: ['urn:ietf:params:scim:api:messages:2.0:PatchOp'],
      Operations: [{ op: 'replace', path: 'password', value: next }],
    });
    assert.equal(p.status, 200, JSON.stringify(p.body));
    assert.equal((await signIn('pw2@entra.test', next)).status, 200);
    assert.equal((await signIn('pw2@entra.test', PW)).status, 401);
    const third = 'Replaced-By-Put-3!';
    const put = await scim('PUT', `/Users/${r.body.id}`, {
      schemas: [USER],
      userName: 'pw2@entra.test',
      displayName: 'Pw Two',
      password: third,
    });
    assert.equal(put.status, 200, JSON.stringify(put.body));
    assert.equal((await signIn('pw2@entra.test', third)).status, 200);
  });

  test("a password below the account's password policy: 400 invalidValue, no user made", async () => {
    const r = await scim('POST', '/Users', { schemas: [USER], userName: 'pw3@entra.test', password: 'abc' });
    assert.equal(r.status, 400, JSON.stringify(r.body));
    assert.equal(r.body.scimType, 'invalidValue');
    assert.match(r.body.detail, /password/);
    assert.equal(await gatehouseUser('pw3@entra.test'), undefined);
  });

  test('an existing Gatehouse user linked by email keeps its own password', async () => {
    const own = 'Users-Own-Pass-4!';
    await user(t, 'sc-entra', { email: 'pw4@entra.test', password: own, fields: { verified: true } });
    const r = await scim('POST', '/Users', { schemas: [USER], userName: 'pw4@entra.test', password: PW });
    assert.equal(r.status, 201, JSON.stringify(r.body));
    const p = await scim('PATCH', `/Users/${r.body.id}`, {
      schemas: ['urn:ietf:params:scim:api:messages:2.0:PatchOp'],
      Operations: [{ op: 'replace', value: { password: 'Another-Dir-Pass-5!' } }],
    });
    assert.equal(p.status, 200, JSON.stringify(p.body));
    assert.equal((await signIn('pw4@entra.test', PW)).status, 401);
    assert.equal((await signIn('pw4@entra.test', own)).status, 200);
  });
});
