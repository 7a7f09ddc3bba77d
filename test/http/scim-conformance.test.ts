import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startTestApp, type TestApp } from '../helpers/harness.ts';

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
  assert.equal((await t.call('POST', '/tenants/resources/tenants/v1', { token: vendor, body: { tenantId: 'sc-entra', name: 'Entra' } })).status, 201);
  conn = (await t.call('POST', C, { token: vendor, headers: hdr, body: { source: 'azure-ad', syncToUserManagement: true } })).body;
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
  (await t.call('GET', `/identity/resources/users/v2?_email=${encodeURIComponent(email)}`, { token: vendor, headers: hdr })).body.items[0];

describe('userName and emails (sync to user management on)', () => {
  test('a userName that is no address takes the user email from emails', async () => {
    const r = await scim('POST', '/Users', { schemas: [USER], userName: 'UserName111', emails: [{ value: 'user111@entra.test', type: 'work' }] });
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
    assert.deepEqual(r.body.emails.map((e: any) => e.value), ['emailName357', 'home357@entra.test']);
    assert.equal(r.body.emails[0].primary, true);
    assert.ok(await gatehouseUser('home357@entra.test'));
  });

  test('no address at all: 400 invalidValue in the SCIM error body, nothing stored', async () => {
    const r = await scim('POST', '/Users', { schemas: [USER], userName: 'NoMail1', emails: [{ value: 'not-an-address' }] });
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
    const g = await scim('POST', '/Groups', { schemas: [GROUP], displayName: 'Group One', members: [{ value: u.body.id }, { value: bare.body.id }] });
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
