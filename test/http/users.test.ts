import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startTestApp, type TestApp } from '../helpers/harness.ts';
import { account, user } from '../fixtures/builders.ts';

let t: TestApp;
let vendor: string;
const U = '/identity/resources/users';
let roleIds: Record<string, string> = {};

before(async () => {
  t = await startTestApp();
  vendor = await t.vendorToken();
  for (const id of ['u-acme', 'u-beta', 'u-gamma']) await account(t, { id });
  const roles = await t.call('GET', '/identity/resources/roles/v1', { token: vendor });
  roleIds = Object.fromEntries(roles.body.map((r: any) => [r.key, r.id]));
  assert.ok(roleIds.admin && roleIds['read-only'], 'seeded roles exist');
});
after(async () => t?.close());

const createIn = (tenantId: string, body: Record<string, unknown>) =>
  t.call('POST', `${U}/v1`, { token: vendor, body, headers: { 'gatehouse-tenant-id': tenantId } });

describe('users: create and read', () => {
  let first: any;

  test('the first user of an account gets the first-user role; the record has every required field', async () => {
    const r = await createIn('u-acme', {
      email: 'Ada@Acme.test',
      name: 'Ada',
      password: 'correct horse battery staple',
      metadata: '{"team":"core"}',
    });
    assert.equal(r.status, 201, JSON.stringify(r.body));
    first = r.body;
    for (const k of [
      'id',
      'email',
      'name',
      'profilePictureUrl',
      'sub',
      'verified',
      'mfaEnrolled',
      'roles',
      'permissions',
      'provider',
      'tenantId',
      'tenantIds',
      'tenants',
      'metadata',
      'vendorMetadata',
      'createdAt',
      'lastLogin',
      'subAccountAccessAllowed',
    ]) {
      assert.ok(k in first, `User has ${k}`);
    }
    assert.equal(first.email, 'ada@acme.test');
    assert.equal(first.sub, first.id);
    assert.equal(first.tenantId, 'u-acme');
    assert.deepEqual(first.tenantIds, ['u-acme']);
    assert.equal(first.provider, 'local');
    assert.equal(first.metadata, '{"team":"core"}');
    assert.equal(first.vendorMetadata, '{}');
    assert.equal(first.managedBy, 'gatehouse');
    assert.deepEqual(
      first.roles.map((r: any) => r.key),
      ['admin'],
    );
    assert.ok(first.permissions.some((p: any) => p.key === 'fe.account-settings.delete.account'));
    assert.equal(first.tenants[0].tenantId, 'u-acme');
    assert.equal(first.tenants[0].isDisabled, false);
    assert.ok(!JSON.stringify(first).includes('argon2'), 'no password hash in the record');
  });

  test('later users get the default roles, or the roleIds given', async () => {
    const d = await createIn('u-acme', { email: 'bob@acme.test' });
    assert.deepEqual(
      d.body.roles.map((r: any) => r.key),
      ['read-only'],
    );
    const e = await createIn('u-acme', { email: 'cy@acme.test', roleIds: [roleIds.admin] });
    assert.deepEqual(
      e.body.roles.map((r: any) => r.key),
      ['admin'],
    );
  });

  test('vendor-only get returns the whole record; a user token is refused with 403', async () => {
    const r = await t.call('GET', `/identity/resources/vendor-only/users/v1/${first.id}`, { token: vendor });
    assert.equal(r.status, 200);
    assert.equal(r.body.email, 'ada@acme.test');
    const user = await t.userToken({ tenantId: 'u-acme', sub: first.id, permissions: ['*'] });
    const f = await t.call('GET', `/identity/resources/vendor-only/users/v1/${first.id}`, { token: user });
    assert.equal(f.status, 403);
    assert.equal(
      (await t.call('GET', '/identity/resources/vendor-only/users/v1/not-a-uuid', { token: vendor })).status,
      404,
    );
    assert.equal(
      (
        await t.call('GET', '/identity/resources/vendor-only/users/v1/00000000-0000-4000-8000-000000000000', {
          token: vendor,
        })
      ).status,
      404,
    );
  });

  test('vendor-only create takes the account in the body', async () => {
    const r = await t.call('POST', '/identity/resources/vendor-only/users/v1', {
      token: vendor,
      body: { tenantId: 'u-beta', email: 'dee@beta.test', name: 'Dee' },
    });
    assert.equal(r.status, 201);
    assert.equal(r.body.tenantId, 'u-beta');
    assert.deepEqual(
      r.body.roles.map((x: any) => x.key),
      ['admin'],
    );
  });

  test('bad input is a clear 4xx and creates nothing', async () => {
    const cases: [Record<string, unknown>, number, RegExp][] = [
      [{ email: 'ada@acme.test' }, 409, /already exists/],
      [{ email: 'ADA@acme.test' }, 409, /already exists/],
      [{ email: 'not-an-email' }, 400, /body\.email must match format "email"/],
      [{}, 400, /body\.email is required/],
      [{ email: 'p@acme.test', phoneNumber: '0123' }, 400, /body\.phoneNumber must match pattern/],
      [{ email: 'm@acme.test', metadata: '[1]' }, 400, /metadata must be a JSON object/],
      [{ email: 'm@acme.test', metadata: '{nope' }, 400, /metadata .*not valid JSON/],
      [{ email: 'v@acme.test', vendorMetadata: 'x' }, 400, /vendorMetadata/],
      [
        { email: 'pic@acme.test', profilePictureUrl: 'x'.repeat(4096) },
        400,
        /profilePictureUrl must NOT have more than 4095/,
      ],
      [
        { email: 'r@acme.test', roleIds: ['00000000-0000-4000-8000-000000000000'] },
        400,
        /00000000-0000-4000-8000-000000000000/,
      ],
      [{ email: 'w@acme.test', password: 'short' }, 400, /password/i],
      [{ email: 'tmp@acme.test', expirationInSeconds: 3600 }, 400, /temporary users/i],
    ];
    for (const [body, status, msg] of cases) {
      const r = await createIn('u-acme', body);
      assert.equal(r.status, status, `${JSON.stringify(body)} → ${JSON.stringify(r.body)}`);
      assert.match(r.body.errors.join(' '), msg, JSON.stringify(body));
    }
    const list = await t.call('GET', `${U}/v3?_limit=200`, { token: vendor });
    const emails = list.body.items.map((u: any) => u.email);
    for (const e of [
      'p@acme.test',
      'm@acme.test',
      'v@acme.test',
      'pic@acme.test',
      'r@acme.test',
      'w@acme.test',
      'tmp@acme.test',
    ])
      assert.ok(!emails.includes(e), e);
    const unknown = await createIn('nowhere', { email: 'x@nowhere.test' });
    assert.equal(unknown.status, 404);
    const noHeader = await t.call('POST', `${U}/v1`, { token: vendor, body: { email: 'h@acme.test' } });
    assert.equal(noHeader.status, 400);
    assert.equal(noHeader.body.errorCode, 'GH-20006');
  });
});

describe('users: update', () => {
  let id: string;
  before(async () => {
    const fields = { phoneNumber: '+15550001111', profilePictureUrl: 'https://img.test/a.png' };
    id = (await user(t, 'u-acme', { email: 'upd@acme.test', name: 'Up', password: null, fields })).id;
  });

  test('partial update changes only the given fields; phone numbers are added, not replaced', async () => {
    const r = await t.call('PUT', `${U}/v1/${id}`, {
      token: vendor,
      body: { name: 'Updated', phoneNumber: '+44-20-7946-0000', vendorMetadata: '{"tier":1}' },
    });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.equal(r.body.name, 'Updated');
    assert.equal(r.body.profilePictureUrl, 'https://img.test/a.png');
    assert.equal(r.body.phoneNumber, '+15550001111');
    assert.deepEqual(r.body.phoneNumbers, ['+15550001111', '+44-20-7946-0000']);
    assert.equal(r.body.vendorMetadata, '{"tier":1}');
  });

  test('profilePictureUrl null clears it; mfaBypass toggles', async () => {
    const r = await t.call('PUT', `${U}/v1/${id}`, {
      token: vendor,
      body: { profilePictureUrl: null, mfaBypass: true },
    });
    assert.equal(r.body.profilePictureUrl, '');
    assert.equal(r.body.mfaBypass, true);
  });

  test('bad updates change nothing', async () => {
    const other = (
      await user(t, 'u-acme', { email: 'ph@acme.test', password: null, fields: { phoneNumber: '+15559990000' } })
    ).id;
    const cases: [Record<string, unknown>, number][] = [
      [{ metadata: '"str"' }, 400],
      [{ phoneNumber: '15550001111' }, 400],
      [{ phoneNumber: '+15559990000' }, 409],
      [{ profilePictureUrl: 'x'.repeat(4096) }, 400],
      [{ name: 5 }, 400],
    ];
    for (const [body, status] of cases) {
      const r = await t.call('PUT', `${U}/v1/${id}`, { token: vendor, body: { name: 'Should not stick', ...body } });
      assert.equal(r.status, status, JSON.stringify(body));
    }
    const now = await t.call('GET', `/identity/resources/vendor-only/users/v1/${id}`, { token: vendor });
    assert.equal(now.body.name, 'Updated');
    assert.ok(!now.body.phoneNumbers.includes('+15559990000'));
    assert.ok(other);
  });
});

describe('users: memberships, roles, flags', () => {
  let id: string;
  before(async () => {
    id = (await user(t, 'u-acme', { email: 'multi@acme.test', password: null })).id;
  });

  test('add to another account with default roles; roles are per account', async () => {
    const r = await t.call('POST', `${U}/v1/${id}/tenant`, { token: vendor, body: { tenantId: 'u-beta' } });
    assert.equal(r.status, 201);
    assert.deepEqual(r.body.tenantIds.sort(), ['u-acme', 'u-beta']);
    const again = await t.call('POST', `${U}/v1/${id}/tenant`, { token: vendor, body: { tenantId: 'u-beta' } });
    assert.equal(again.status, 409);
    const assign = await t.call('POST', `${U}/v1/${id}/roles`, {
      token: vendor,
      body: { roleIds: [roleIds.admin] },
      headers: { 'gatehouse-tenant-id': 'u-beta' },
    });
    assert.equal(assign.status, 201);
    assert.deepEqual(assign.body.roles.map((x: any) => x.key).sort(), ['admin', 'read-only']);
    const inAcme = await t.call('GET', `${U}/v1/${id}`, {
      token: vendor,
      headers: { 'gatehouse-tenant-id': 'u-acme' },
    });
    assert.deepEqual(
      inAcme.body.roles.map((x: any) => x.key),
      ['read-only'],
    );
    const un = await t.call('DELETE', `${U}/v1/${id}/roles`, {
      token: vendor,
      body: { roleIds: [roleIds['read-only']] },
      headers: { 'gatehouse-tenant-id': 'u-beta' },
    });
    assert.deepEqual(
      un.body.roles.map((x: any) => x.key),
      ['admin'],
    );
    const notMember = await t.call('POST', `${U}/v1/${id}/roles`, {
      token: vendor,
      body: { roleIds: [roleIds.admin] },
      headers: { 'gatehouse-tenant-id': 'u-gamma' },
    });
    assert.equal(notMember.status, 404);
  });

  test('disable and enable in one account', async () => {
    const d = await t.call('POST', `/identity/resources/tenants/users/v1/${id}/disable`, {
      token: vendor,
      headers: { 'gatehouse-tenant-id': 'u-beta' },
    });
    assert.equal(d.status, 200);
    assert.equal(d.body.tenants.find((x: any) => x.tenantId === 'u-beta').isDisabled, true);
    assert.equal(d.body.tenants.find((x: any) => x.tenantId === 'u-acme').isDisabled, false);
    const e = await t.call('POST', `/identity/resources/tenants/users/v1/${id}/enable`, {
      token: vendor,
      headers: { 'gatehouse-tenant-id': 'u-beta' },
    });
    assert.equal(e.body.tenants.find((x: any) => x.tenantId === 'u-beta').isDisabled, false);
  });

  test('lock and unlock', async () => {
    const l = await t.call('POST', `${U}/v1/${id}/lock`, { token: vendor });
    assert.equal(l.body.isLocked, true);
    const u = await t.call('POST', `${U}/v1/${id}/unlock`, { token: vendor });
    assert.equal(u.body.isLocked, false);
  });

  test('sub-account access: per membership, forced on under alwaysOn', async () => {
    const r = await t.call('PUT', `/identity/resources/sub-tenants/users/v1/${id}/access`, {
      token: vendor,
      body: { allowAccess: true },
      headers: { 'gatehouse-tenant-id': 'u-acme' },
    });
    assert.equal(r.status, 200);
    assert.equal(r.body.subAccountAccessAllowed, true);
    await t.call('PUT', `/identity/resources/sub-tenants/users/v1/${id}/access`, {
      token: vendor,
      body: { allowAccess: false },
      headers: { 'gatehouse-tenant-id': 'u-acme' },
    });
    const hs = await t.call('PUT', '/tenants/resources/sub-tenants/v1/u-acme/hierarchy-settings', {
      token: vendor,
      body: { subAccountAccessType: 'alwaysOn' },
    });
    assert.equal(hs.status, 200);
    const now = await t.call('GET', `${U}/v1/${id}`, { token: vendor, headers: { 'gatehouse-tenant-id': 'u-acme' } });
    assert.equal(now.body.subAccountAccessAllowed, true);
    await t.call('PUT', '/tenants/resources/sub-tenants/v1/u-acme/hierarchy-settings', {
      token: vendor,
      body: { subAccountAccessType: 'defaultOff' },
    });
  });

  test('temporary users: configuration, then an expiring membership', async () => {
    const off = await t.call('GET', `${U}/temporary/v1/configuration`, { token: vendor });
    assert.deepEqual(off.body, { enabled: false });
    const on = await t.call('PUT', `${U}/temporary/v1/configuration`, { token: vendor, body: { enabled: true } });
    assert.deepEqual(on.body, { enabled: true });
    const r = await createIn('u-acme', { email: 'temp@acme.test', expirationInSeconds: 3600 });
    assert.equal(r.status, 201);
    const exp = Date.parse(r.body.tenants[0].temporaryExpirationDate);
    assert.ok(Math.abs(exp - (Date.now() + 3600_000)) < 60_000);
    const perm = await t.call('DELETE', `${U}/temporary/v1/${r.body.id}`, {
      token: vendor,
      headers: { 'gatehouse-tenant-id': 'u-acme' },
    });
    assert.equal(perm.body.tenants[0].temporaryExpirationDate, undefined);
    await t.call('PUT', `${U}/temporary/v1/configuration`, { token: vendor, body: { enabled: false } });
  });
});

describe('users: list, removal and account deletion', () => {
  test('list pages by account and filters by email', async () => {
    const r = await t.call('GET', `${U}/v3?_limit=2&_sortBy=email`, {
      token: vendor,
      headers: { 'gatehouse-tenant-id': 'u-acme' },
    });
    assert.equal(r.status, 200);
    assert.equal(r.body.items.length, 2);
    assert.ok(r.body._metadata.totalItems >= 5);
    assert.ok(r.body.items[0].email < r.body.items[1].email);
    const byEmail = await t.call('GET', `${U}/v3?_email=ADA@acme.test`, { token: vendor });
    assert.deepEqual(
      byEmail.body.items.map((u: any) => u.email),
      ['ada@acme.test'],
    );
    const beta = await t.call('GET', `${U}/v2`, { token: vendor, headers: { 'gatehouse-tenant-id': 'u-beta' } });
    assert.ok(beta.body.items.every((u: any) => u.tenantIds.includes('u-beta')));
    const bad = await t.call('GET', `${U}/v3?_limit=500`, { token: vendor });
    assert.equal(bad.status, 400);
  });

  test('removing from one account keeps the user; from the last deletes them', async () => {
    const id = (await user(t, 'u-gamma', { email: 'leaver@gamma.test', password: null })).id;
    await t.call('POST', `${U}/v1/${id}/tenant`, { token: vendor, body: { tenantId: 'u-beta' } });
    const r = await t.call('DELETE', `${U}/v1/${id}`, { token: vendor, headers: { 'gatehouse-tenant-id': 'u-gamma' } });
    assert.equal(r.status, 200);
    const still = await t.call('GET', `/identity/resources/vendor-only/users/v1/${id}`, { token: vendor });
    assert.deepEqual(still.body.tenantIds, ['u-beta']);
    assert.equal(still.body.tenantId, 'u-beta');
    await t.call('DELETE', `${U}/v1/${id}`, { token: vendor, headers: { 'gatehouse-tenant-id': 'u-beta' } });
    assert.equal(
      (await t.call('GET', `/identity/resources/vendor-only/users/v1/${id}`, { token: vendor })).status,
      404,
    );
    assert.equal((await t.call('DELETE', `${U}/v1/${id}`, { token: vendor })).status, 404);
  });

  test('deleting an account removes its users; members of other accounts only lose that membership', async () => {
    await account(t, { id: 'doomed', name: 'Doomed' });
    const only = (await user(t, 'doomed', { email: 'only@doomed.test', password: null })).id;
    const both = (await user(t, 'doomed', { email: 'both@doomed.test', password: null })).id;
    await t.call('POST', `${U}/v1/${both}/tenant`, { token: vendor, body: { tenantId: 'u-gamma' } });
    const del = await t.call('DELETE', '/tenants/resources/tenants/v1/doomed', { token: vendor });
    assert.equal(del.status, 200);
    assert.equal(
      (await t.call('GET', `/identity/resources/vendor-only/users/v1/${only}`, { token: vendor })).status,
      404,
    );
    const kept = await t.call('GET', `/identity/resources/vendor-only/users/v1/${both}`, { token: vendor });
    assert.deepEqual(kept.body.tenantIds, ['u-gamma']);
    assert.equal(kept.body.tenantId, 'u-gamma');
  });
});

describe('users: one account cannot reach another', () => {
  test('an admin of one account reads and changes nothing of another', async () => {
    const admin = (await user(t, 'u-gamma', { email: 'admin@gamma.test', password: null })).body;
    const outsider = (await user(t, 'u-beta', { email: 'outsider@beta.test', password: null })).body;
    const token = await t.userToken({ tenantId: 'u-gamma', sub: admin.id, permissions: ['fe.secure.*'] });
    // The header is ignored for user tokens: the account is always the token's.
    const read = await t.call('GET', `${U}/v1/${outsider.id}`, { token, headers: { 'gatehouse-tenant-id': 'u-beta' } });
    assert.equal(read.status, 404);
    const roles = await t.call('POST', `${U}/v1/${outsider.id}/roles`, { token, body: { roleIds: [roleIds.admin] } });
    assert.equal(roles.status, 404);
    const disable = await t.call('POST', `/identity/resources/tenants/users/v1/${outsider.id}/disable`, { token });
    assert.equal(disable.status, 404);
    const del = await t.call('DELETE', `${U}/v1/${outsider.id}`, { token });
    assert.equal(del.status, 404);
    const list = await t.call('GET', `${U}/v3?_limit=200`, { token, headers: { 'gatehouse-tenant-id': 'u-beta' } });
    assert.ok(list.body.items.every((u: any) => u.tenantIds.includes('u-gamma')));
    assert.ok(!list.body.items.some((u: any) => u.id === outsider.id));
    const still = await t.call('GET', `/identity/resources/vendor-only/users/v1/${outsider.id}`, { token: vendor });
    assert.equal(still.body.tenants[0].isDisabled, false);
    assert.deepEqual(
      still.body.roles.map((r: any) => r.key),
      outsider.roles.map((r: any) => r.key),
      'roles unchanged',
    );
  });
});

describe('users: an account admin creates users without vendor-only fields', () => {
  test('POST /users/v1 with a user token refuses vendorMetadata, mfaBypass, externalId and verified (400 naming them); nothing is created', async () => {
    const admin = (await user(t, 'u-gamma', { email: 'creator@gamma.test', password: null })).body;
    const token = await t.userToken({
      tenantId: 'u-gamma',
      sub: admin.id,
      permissions: ['fe.secure.write.users', 'fe.secure.read.users'],
    });
    const r = await t.call('POST', `${U}/v1`, {
      token,
      body: {
        email: 'bypass@gamma.test',
        vendorMetadata: '{"plan":"enterprise"}',
        mfaBypass: true,
        externalId: 'ext-1',
        verified: true,
      },
    });
    assert.equal(r.status, 400, JSON.stringify(r.body));
    assert.equal(r.body.errorCode, 'GH-10001');
    for (const f of ['vendorMetadata', 'mfaBypass', 'externalId', 'verified'])
      assert.match(r.body.errors[0], new RegExp(`body\\.${f}`));
    const byEmail = await t.call('GET', `${U}/v1/email?email=bypass@gamma.test`, { token: vendor });
    assert.equal(byEmail.status, 404, 'no user was created');
    for (const extra of [{ mfaBypass: false }, { verified: false }]) {
      const one = await t.call('POST', `${U}/v1`, { token, body: { email: 'one@gamma.test', ...extra } });
      assert.equal(one.status, 400, `${Object.keys(extra)[0]} is refused whatever its value`);
    }
    // The admin still creates users with the other fields; the created user has the defaults.
    const ok = await t.call('POST', `${U}/v1`, {
      token,
      body: { email: 'plain@gamma.test', name: 'Plain', metadata: '{"team":"x"}' },
    });
    assert.equal(ok.status, 201, JSON.stringify(ok.body));
    assert.equal(ok.body.mfaBypass ?? false, false);
    assert.equal(ok.body.verified, false);
    assert.equal(ok.body.vendorMetadata, '{}');
    // An environment token still sets them.
    const v = await createIn('u-gamma', {
      email: 'vendor-made@gamma.test',
      vendorMetadata: '{"plan":"enterprise"}',
      mfaBypass: true,
      verified: true,
    });
    assert.equal(v.status, 201);
    assert.equal(v.body.mfaBypass, true);
    assert.equal(v.body.verified, true);
  });
});
