import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { startTestApp, type Reply, type TestApp } from '../helpers/harness.ts';
import { PASSWORD, account, signedIn, user } from '../fixtures/builders.ts';

/**
 * Get a user by email, the own-profile update (PUT /users/v1, and PUT /users/v2/me under the same rules), a user's
 * email change, and the vendor's password check: answers, every refusal, and that a refused request changes nothing.
 */
let t: TestApp;
let vendor: string;
const U = '/identity/resources/users';
const VERIFY = '/identity/resources/vendor-only/users/v1/passwords/verify';
const D = '/identity/resources/configurations/restrictions/v1/email-domain';
const NO_SUCH_USER = '00000000-0000-4000-8000-000000000000';

let ada: any; // ue-a, with a password and a phone number
let bob: any; // ue-a and ue-b
let cy: any; // ue-a, no password

const v = (method: string, url: string, body?: unknown, headers: Record<string, string> = {}) =>
  t.call(method, url, { token: vendor, body, headers });
const inAccount = (tenantId: string, userId?: string) => ({
  'gatehouse-tenant-id': tenantId,
  ...(userId ? { 'gatehouse-user-id': userId } : {}),
});
/** The whole record, as the vendor-only get answers it: what "nothing changed" compares. */
/** A signed-in session: a profile update that sets a phone number is an identity change (the user's own session). */
const sessionOf = async (email: string) => (await signedIn(t, { email })).accessToken;
const recordOf = async (id: string) => {
  const r = await v('GET', `/identity/resources/vendor-only/users/v1/${id}`);
  assert.equal(r.status, 200, JSON.stringify(r.body));
  return r.body;
};
function refused(r: Reply, status: number, errorCode: string, message?: RegExp) {
  assert.equal(r.status, status, JSON.stringify(r.body));
  assert.equal(r.body.errorCode, errorCode, JSON.stringify(r.body));
  if (message) assert.match(r.body.errors.join(' '), message);
}
const updatedEvents = async (id: string) =>
  (
    await t.db.query<{ data: any }>(
      "SELECT data FROM events WHERE event_key = 'user.updated' AND entity_id = $1 ORDER BY seq",
      [id],
    )
  ).rows.map((r) => r.data);

before(async () => {
  t = await startTestApp();
  vendor = await t.vendorToken();
  for (const tenantId of ['ue-a', 'ue-b', 'ue-c']) await account(t, { id: tenantId });
  ada = await user(t, 'ue-a', { email: 'ada@ue.test', name: 'Ada', fields: { phoneNumber: '+15550002001' } });
  bob = await user(t, 'ue-a', { email: 'bob@ue.test', name: 'Bob' });
  assert.equal((await v('POST', `${U}/v1/${bob.id}/tenant`, { tenantId: 'ue-b' })).status, 201);
  cy = await user(t, 'ue-a', { email: 'cy@ue.test', name: 'Cy', password: null });
});
after(async () => t?.close());

describe('GET /users/v1/email: a user by email', () => {
  test('answers the record the gets by id answer; any case; the tenant header picks the account', async () => {
    const r = await v('GET', `${U}/v1/email?email=${encodeURIComponent('ADA@Ue.Test')}`);
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.deepEqual(r.body, await recordOf(ada.id));
    const inB = await v('GET', `${U}/v1/email?email=bob@ue.test`, undefined, inAccount('ue-b'));
    assert.equal(inB.status, 200);
    assert.equal(inB.body.tenantId, 'ue-b');
    assert.deepEqual(inB.body, (await v('GET', `${U}/v1/${bob.id}`, undefined, inAccount('ue-b'))).body);
    const alias = await t.call('GET', `/frontegg${U}/v1/email?email=bob@ue.test`, {
      token: vendor,
      headers: { 'frontegg-tenant-id': 'ue-b' },
    });
    assert.equal(alias.status, 200);
    assert.equal(alias.body.tenantId, 'ue-b');
  });

  test('the static path wins over /users/v1/{userId}, which still answers ids', async () => {
    const r = await v('GET', `${U}/v1/email?email=cy@ue.test`, undefined, inAccount('ue-a'));
    assert.equal(r.status, 200);
    assert.equal(r.body.id, cy.id);
    // Without the query, the email route's own 400 (the get by id would say "No user with id email").
    refused(
      await v('GET', `${U}/v1/email`, undefined, inAccount('ue-a')),
      400,
      'GH-10001',
      /querystring\.email is required/,
    );
    const byId = await v('GET', `${U}/v1/${cy.id}`, undefined, inAccount('ue-a'));
    assert.equal(byId.status, 200);
    assert.equal(byId.body.email, 'cy@ue.test');
  });

  test('unknown email 404, malformed or missing 400, another account 404, user token 403, no token 401', async () => {
    refused(
      await v('GET', `${U}/v1/email?email=nobody@ue.test`),
      404,
      'GH-42001',
      /No user with email nobody@ue\.test/,
    );
    refused(
      await v('GET', `${U}/v1/email?email=not-an-email`),
      400,
      'GH-10001',
      /querystring\.email must match format "email"/,
    );
    refused(await v('GET', `${U}/v1/email?email=`), 400, 'GH-10001', /querystring\.email/);
    refused(await v('GET', `${U}/v1/email`), 400, 'GH-10001', /querystring\.email is required/);
    refused(await v('GET', `${U}/v1/email?email=ada@ue.test`, undefined, inAccount('ue-b')), 404, 'GH-42005');
    const user = await t.userToken({ tenantId: 'ue-a', sub: ada.id, permissions: ['*'] });
    refused(await t.call('GET', `${U}/v1/email?email=ada@ue.test`, { token: user }), 403, 'GH-20003');
    refused(await t.call('GET', `${U}/v1/email?email=ada@ue.test`), 401, 'GH-20001');
  });
});

describe('PUT /users/v1: the own profile', () => {
  test('a user token changes its own user, answered in its active account; phone numbers are added; user.updated', async () => {
    const token = await sessionOf('ada@ue.test');
    const r = await t.call('PUT', `${U}/v1`, {
      token,
      body: {
        name: 'Ada L',
        profilePictureUrl: 'https://img.test/ada.png',
        metadata: '{"lang":"en"}',
        phoneNumber: '+15550002002',
      },
    });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.equal(r.body.id, ada.id);
    assert.equal(r.body.tenantId, 'ue-a');
    assert.equal(r.body.name, 'Ada L');
    assert.equal(r.body.profilePictureUrl, 'https://img.test/ada.png');
    assert.equal(r.body.metadata, '{"lang":"en"}');
    assert.deepEqual(r.body.phoneNumbers, ['+15550002001', '+15550002002']);
    assert.deepEqual(r.body, await recordOf(ada.id), 'stored as answered');
    const last = (await updatedEvents(ada.id)).at(-1);
    assert.deepEqual(last, {
      userId: ada.id,
      email: 'ada@ue.test',
      changed: ['name', 'profilePictureUrl', 'metadata', 'phoneNumber'],
    });
    const cleared = await t.call('PUT', `${U}/v1`, { token, body: { profilePictureUrl: null } });
    assert.equal(cleared.status, 200);
    assert.equal(cleared.body.profilePictureUrl, '');
    assert.equal(cleared.body.name, 'Ada L', 'only the given fields change');
  });

  test('an environment token acts on the user and account of the headers', async () => {
    const r = await v('PUT', `${U}/v1`, { name: 'Bob B' }, inAccount('ue-b', bob.id));
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.equal(r.body.name, 'Bob B');
    assert.equal(r.body.tenantId, 'ue-b');
    const alias = await t.call('PUT', `/frontegg${U}/v1`, {
      token: vendor,
      body: { name: 'Bob C' },
      headers: { 'frontegg-tenant-id': 'ue-a', 'frontegg-user-id': bob.id },
    });
    assert.equal(alias.status, 200, JSON.stringify(alias.body));
    assert.equal(alias.body.tenantId, 'ue-a');
    assert.equal((await recordOf(bob.id)).name, 'Bob C');
  });

  test('fields a user may not change are refused with 400 naming them, and nothing changes', async () => {
    const token = await t.userToken({ tenantId: 'ue-a', sub: ada.id });
    const before = await recordOf(ada.id);
    const events = (await updatedEvents(ada.id)).length;
    for (const [field, value] of [
      ['vendorMetadata', '{"tier":"gold"}'],
      ['mfaBypass', true],
      ['externalId', 'ext-1'],
      ['email', 'ada2@ue.test'],
    ] as const) {
      for (const [who, o] of [
        ['user token', { token }],
        ['environment token', { token: vendor, headers: inAccount('ue-a', ada.id) }],
      ] as const) {
        const r = await t.call('PUT', `${U}/v1`, { ...o, body: { name: 'Mallory', [field]: value } });
        refused(r, 400, 'GH-10001', new RegExp(`body\\.${field}: a user cannot change ${field}`));
        assert.deepEqual(r.body.context, { fields: [field] }, `${who} ${field}`);
      }
    }
    const me = await t.call('PUT', `${U}/v2/me`, {
      token,
      body: { name: 'Mallory', vendorMetadata: '{"tier":"gold"}', mfaBypass: true },
    });
    refused(me, 400, 'GH-10001', /body\.vendorMetadata, body\.mfaBypass: a user cannot change/);
    assert.deepEqual(await recordOf(ada.id), before);
    assert.equal((await updatedEvents(ada.id)).length, events, 'no event for a refused update');
    const ok = await t.call('PUT', `${U}/v2/me`, { token, body: { name: 'Ada M', unknownField: 1 } });
    assert.equal(ok.status, 200, 'other unknown fields are ignored, as everywhere');
    assert.equal(ok.body.name, 'Ada M');
  });

  test('bad values are 400 naming the field and rule; a phone number of another user is 409; nothing changes', async () => {
    const token = await sessionOf('bob@ue.test');
    const before = await recordOf(bob.id);
    const cases: [Record<string, unknown>, number, string, RegExp][] = [
      [{ name: 'X', phoneNumber: '0123' }, 400, 'GH-10001', /body\.phoneNumber must match pattern/],
      [{ name: 'X', metadata: '[1]' }, 400, 'GH-10001', /metadata must be a JSON object/],
      [{ name: 'X', metadata: '{nope' }, 400, 'GH-10001', /metadata .*not valid JSON/],
      [
        { name: 'X', profilePictureUrl: 'x'.repeat(4096) },
        400,
        'GH-10001',
        /body\.profilePictureUrl must NOT have more than 4095/,
      ],
      [{ name: 'x'.repeat(256) }, 400, 'GH-10001', /body\.name must NOT have more than 255/],
      [{ name: 42 }, 400, 'GH-10001', /body\.name must be string/],
      [{ name: 'X', phoneNumber: '+15550002001' }, 409, 'GH-42004', /\+15550002001 belongs to another user/],
    ];
    for (const [body, status, code, msg] of cases)
      refused(await t.call('PUT', `${U}/v1`, { token, body }), status, code, msg);
    refused(
      await t.call('PUT', `${U}/v1`, { token, raw: '{"name":', headers: { 'content-type': 'application/json' } }),
      400,
      'GH-10005',
    );
    assert.deepEqual(await recordOf(bob.id), before);
  });

  test('environment token: headers required, unknown user or non-member 404; no token 401; nothing changes', async () => {
    const before = await recordOf(cy.id);
    refused(await v('PUT', `${U}/v1`, { name: 'X' }, inAccount('ue-a')), 400, 'GH-64009', /gatehouse-user-id/);
    refused(
      await v('PUT', `${U}/v1`, { name: 'X' }, { 'gatehouse-user-id': cy.id }),
      400,
      'GH-20006',
      /gatehouse-tenant-id/,
    );
    refused(await v('PUT', `${U}/v1`, { name: 'X' }, inAccount('ue-a', NO_SUCH_USER)), 404, 'GH-42001');
    refused(await v('PUT', `${U}/v1`, { name: 'X' }, inAccount('ue-a', 'not-a-uuid')), 404, 'GH-42001');
    refused(await v('PUT', `${U}/v1`, { name: 'X' }, inAccount('ue-c', cy.id)), 404, 'GH-42005');
    refused(await v('PUT', `${U}/v1`, { name: 'X' }, inAccount('no-such-account', cy.id)), 404, 'GH-42005');
    // A user token for an account the user does not belong to (e.g. removed since it was issued).
    refused(
      await t.call('PUT', `${U}/v1`, {
        token: await t.userToken({ tenantId: 'ue-c', sub: cy.id }),
        body: { name: 'X' },
      }),
      404,
      'GH-42005',
    );
    refused(await t.call('PUT', `${U}/v1`, { body: { name: 'X' } }), 401, 'GH-20001');
    assert.deepEqual(await recordOf(cy.id), before);
  });
});

describe("PUT /users/v1/{userId}/email: a user's email", () => {
  test('changes the email (stored lower-case); the user becomes unverified; user.updated names both', async () => {
    const dee = (await v('POST', `${U}/v1`, { email: 'dee@ue.test', password: PASSWORD }, inAccount('ue-a'))).body;
    assert.equal((await v('POST', `${U}/v1/${dee.id}/verify`)).body.verified, true);
    const r = await v('PUT', `${U}/v1/${dee.id}/email`, { email: 'Dee.New@UE.test' });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.equal(r.body.email, 'dee.new@ue.test');
    assert.equal(r.body.verified, false);
    assert.deepEqual(r.body, await recordOf(dee.id));
    assert.equal((await v('GET', `${U}/v1/email?email=dee.new@ue.test`)).body.id, dee.id);
    assert.equal((await v('GET', `${U}/v1/email?email=dee@ue.test`)).status, 404, 'the old address is free');
    assert.deepEqual((await v('POST', VERIFY, { email: 'dee.new@ue.test', password: PASSWORD })).body, {
      isValid: true,
    });
    const signIn = await t.call('POST', '/identity/resources/auth/v1/user', {
      body: { email: 'dee.new@ue.test', password: PASSWORD },
    });
    assert.equal(signIn.status, 200, JSON.stringify(signIn.body));
    assert.deepEqual((await updatedEvents(dee.id)).at(-1), {
      userId: dee.id,
      email: 'dee.new@ue.test',
      previousEmail: 'dee@ue.test',
      tenantId: 'ue-a',
      changed: ['email', 'verified'],
    });
    // The same address (any case) changes nothing: still verified once verified again, no event.
    await v('POST', `${U}/v1/${dee.id}/verify`);
    const events = (await updatedEvents(dee.id)).length;
    const same = await v('PUT', `${U}/v1/${dee.id}/email`, { email: 'DEE.NEW@ue.test' });
    assert.equal(same.status, 200);
    assert.equal(same.body.verified, true);
    assert.equal((await updatedEvents(dee.id)).length, events);
  });

  test('an email of another user is 409; bad input 400; unknown user 404; user token 403; no token 401; nothing changes', async () => {
    const before = await recordOf(cy.id);
    refused(
      await v('PUT', `${U}/v1/${cy.id}/email`, { email: 'ADA@ue.test' }),
      409,
      'GH-42002',
      /ada@ue\.test already exists/,
    );
    refused(
      await v('PUT', `${U}/v1/${cy.id}/email`, { email: 'not-an-email' }),
      400,
      'GH-10001',
      /body\.email must match format "email"/,
    );
    refused(await v('PUT', `${U}/v1/${cy.id}/email`, {}), 400, 'GH-10001', /body\.email is required/);
    refused(await v('PUT', `${U}/v1/${cy.id}/email`, { email: 42 }), 400, 'GH-10001', /body\.email must be string/);
    refused(
      await v('PUT', `${U}/v1/${cy.id}/email`, { email: `${'x'.repeat(320)}@ue.test` }),
      400,
      'GH-10001',
      /body\.email/,
    );
    refused(await v('PUT', `${U}/v1/${NO_SUCH_USER}/email`, { email: 'free@ue.test' }), 404, 'GH-42001');
    refused(await v('PUT', `${U}/v1/not-a-uuid/email`, { email: 'free@ue.test' }), 404, 'GH-42001');
    const admin = await t.userToken({ tenantId: 'ue-a', sub: cy.id, permissions: ['*'] });
    refused(
      await t.call('PUT', `${U}/v1/${cy.id}/email`, { token: admin, body: { email: 'free@ue.test' } }),
      403,
      'GH-20003',
    );
    refused(await t.call('PUT', `${U}/v1/${cy.id}/email`, { body: { email: 'free@ue.test' } }), 401, 'GH-20001');
    assert.deepEqual(await recordOf(cy.id), before);
    assert.equal((await v('GET', `${U}/v1/email?email=free@ue.test`)).status, 404);
  });

  test('a domain an account of the user blocks is refused (403), as creating the user there would be', async () => {
    assert.equal((await v('POST', D, { domain: 'blocked.test', type: 'BLOCK' }, inAccount('ue-b'))).status, 201);
    assert.equal((await v('POST', `${D}/config`, { active: true }, inAccount('ue-b'))).status, 201);
    const before = await recordOf(bob.id);
    refused(
      await v('PUT', `${U}/v1/${bob.id}/email`, { email: 'bob@blocked.test' }),
      403,
      'GH-65009',
      /body\.email: blocked\.test is a blocked email domain of account ue-b/,
    );
    assert.deepEqual(await recordOf(bob.id), before);
    const other = await v('PUT', `${U}/v1/${cy.id}/email`, { email: 'cy@blocked.test' });
    assert.equal(other.status, 200, 'cy is not a member of ue-b');
    assert.equal((await v('PUT', `${U}/v1/${cy.id}/email`, { email: 'cy@ue.test' })).status, 200);
  });
});

describe("POST /vendor-only/users/v1/passwords/verify: the vendor's password check", () => {
  test('answers {isValid}: true for the password, false for a wrong one, an unknown email or a user without password', async () => {
    const ok = await v('POST', VERIFY, { email: 'Ada@UE.test', password: PASSWORD });
    assert.equal(ok.status, 200);
    assert.deepEqual(ok.body, { isValid: true });
    for (const [email, password] of [
      ['ada@ue.test', 'wrong password'],
      ['ada@ue.test', PASSWORD.toUpperCase()],
      ['nobody@ue.test', PASSWORD],
      ['cy@ue.test', PASSWORD],
    ]) {
      const r = await v('POST', VERIFY, { email, password });
      assert.equal(r.status, 200, JSON.stringify(r.body));
      assert.deepEqual(r.body, { isValid: false }, email);
    }
  });

  test('not a sign-in: wrong passwords are not counted toward lockout (5 attempts by default)', async () => {
    for (let i = 0; i < 7; i++)
      assert.deepEqual((await v('POST', VERIFY, { email: 'bob@ue.test', password: `wrong ${i}` })).body, {
        isValid: false,
      });
    const rec = await recordOf(bob.id);
    assert.equal(rec.isLocked, false);
    const signIn = await t.call('POST', '/identity/resources/auth/v1/user', {
      body: { email: 'bob@ue.test', password: PASSWORD },
    });
    assert.equal(signIn.status, 200, JSON.stringify(signIn.body));
  });

  test('a right password over an imported hash replaces it with argon2id; a wrong one leaves it', async () => {
    const sha = createHash('sha256').update(PASSWORD).digest('hex');
    const m = await v('POST', '/identity/resources/migrations/v1/local', {
      email: 'imp@ue.test',
      tenantId: 'ue-a',
      passwordHash: sha,
      passwordHashType: 'sha256',
    });
    assert.equal(m.status, 201, JSON.stringify(m.body));
    const stored = async () =>
      (await t.db.query<{ password_hash: string }>('SELECT password_hash FROM users WHERE id = $1', [m.body.id]))
        .rows[0].password_hash;
    const imported = await stored();
    assert.ok(imported.endsWith(sha) && !imported.startsWith('$argon2'), imported);
    // The rehash keeps the password-rotation clock (it is the same password): age it, then check it is unchanged.
    await t.db.query(`UPDATE users SET password_changed_at = '2020-01-01T00:00:00Z' WHERE id = $1`, [m.body.id]);
    const clock = async () =>
      (await t.db.query<{ c: Date }>('SELECT password_changed_at AS c FROM users WHERE id = $1', [m.body.id])).rows[0]
        .c;
    assert.deepEqual((await v('POST', VERIFY, { email: 'imp@ue.test', password: 'wrong password' })).body, {
      isValid: false,
    });
    assert.equal(await stored(), imported);
    assert.deepEqual((await v('POST', VERIFY, { email: 'imp@ue.test', password: PASSWORD })).body, { isValid: true });
    assert.match(await stored(), /^\$argon2id\$/);
    assert.equal(new Date(await clock()).toISOString(), '2020-01-01T00:00:00.000Z');
    assert.deepEqual(
      (await v('POST', VERIFY, { email: 'imp@ue.test', password: PASSWORD })).body,
      { isValid: true },
      'the new hash verifies',
    );
  });

  test('bad input 400; user token 403; no token 401; the password is in no audit entry', async () => {
    const since = new Date().toISOString();
    assert.deepEqual((await v('POST', VERIFY, { email: 'ada@ue.test', password: PASSWORD })).body, { isValid: true });
    const cases: [Record<string, unknown>, RegExp][] = [
      [{ password: PASSWORD }, /body\.email is required/],
      [{ email: 'ada@ue.test' }, /body\.password is required/],
      [{ email: 'not-an-email', password: PASSWORD }, /body\.email must match format "email"/],
      [{ email: 'ada@ue.test', password: '' }, /body\.password must NOT have fewer than 1/],
      [{ email: 'ada@ue.test', password: 'x'.repeat(1025) }, /body\.password must NOT have more than 1024/],
      [{ email: 'ada@ue.test', password: 12345678 }, /body\.password must be string/],
    ];
    for (const [body, msg] of cases) refused(await v('POST', VERIFY, body), 400, 'GH-10001', msg);
    const user = await t.userToken({ tenantId: 'ue-a', sub: ada.id, permissions: ['*'] });
    refused(
      await t.call('POST', VERIFY, { token: user, body: { email: 'ada@ue.test', password: PASSWORD } }),
      403,
      'GH-20003',
    );
    refused(await t.call('POST', VERIFY, { body: { email: 'ada@ue.test', password: PASSWORD } }), 401, 'GH-20001');
    const audits = await v('GET', `/audits?from=${encodeURIComponent(since)}&count=1000`);
    assert.equal(audits.status, 200, JSON.stringify(audits.body));
    const checks = audits.body.data.filter((e: any) => e.action === 'vendor_only.user.password.verify');
    assert.ok(
      checks.some((e: any) => e.outcome === 'success' && e.target.type === 'user' && e.target.id === ada.id),
      'a check names the user it was about',
    );
    assert.ok(!JSON.stringify(audits.body).includes(PASSWORD), 'no password in any entry');
    assert.equal((await recordOf(ada.id)).isLocked, false);
  });
});
