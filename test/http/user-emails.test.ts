import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Reply, TestApp } from '../helpers/harness.ts';
import { codeIn, startAppWithMailbox, type Mailbox } from '../helpers/mailbox.ts';
import { signedIn, user as newUser } from '../fixtures/builders.ts';

/** A user's several addresses (/identity/resources/users/emails/v1): add with an emailed code, verify, primary swap, delete. */
const U = '/identity/resources/users';
const E = `${U}/emails/v1`;
const LOGIN = '/identity/resources/auth/v1/user';
const POLICY = '/identity/resources/configurations/v1/user-emails-policy';
const PASSWORD = 'Emails-Passw0rd-2024!';
const TENANT = 'em-acme';

let t: TestApp;
let vendor: string;
let mailbox: Mailbox;
let close: (() => Promise<void>) | undefined;
const v = (method: string, url: string, body?: unknown) => t.call(method, url, { token: vendor, body });
const as = (token: string, method: string, url: string, body?: unknown) => t.call(method, url, { token, body });
function refused(r: Reply, status: number, errorCode: string) {
  assert.equal(r.status, status, JSON.stringify(r.body));
  assert.equal(r.body.errorCode, errorCode, JSON.stringify(r.body));
}
const createUser = async (email: string) =>
  (await newUser(t, TENANT, { email, name: 'E User', password: PASSWORD })).id;
async function login(email: string): Promise<Reply> {
  return t.call('POST', LOGIN, { body: { email, password: PASSWORD } });
}
const tokenOf = async (email: string) => (await signedIn(t, { email, password: PASSWORD })).accessToken;
const claims = (token: string) => JSON.parse(Buffer.from(token.split('.')[1], 'base64url').toString('utf8'));
const codeFor = async (email: string, n = 1) =>
  codeIn(await mailbox.waitFor(() => mailbox.to(email).length >= n).then(() => mailbox.to(email)[n - 1]));
const user = async (id: string) => (await v('GET', `/identity/resources/vendor-only/users/v1/${id}`)).body;

before(async () => {
  ({ t, vendor, mailbox, close } = await startAppWithMailbox({ CODE_RATE_LIMIT_PER_IDENTIFIER: '4' }, TENANT));
});
after(async () => {
  await close?.();
});

describe('user emails', () => {
  test('add sends a code; verify; primary swap changes sign-in, token claim, voids old proofs; old primary stays', async () => {
    const id = await createUser('ann@em.test');
    const tok = await tokenOf('ann@em.test');
    const added = await as(tok, 'POST', E, { email: ' Ann.Work@EM.test ' });
    assert.equal(added.status, 201, JSON.stringify(added.body));
    assert.deepEqual(
      { ...added.body, id: undefined, createdAt: undefined, updatedAt: undefined },
      {
        id: undefined,
        userId: id,
        email: 'ann.work@em.test',
        verified: false,
        isPrimary: false,
        createdAt: undefined,
        updatedAt: undefined,
      },
    );
    const code = await codeFor('ann.work@em.test');
    // Not verified yet: cannot become primary.
    refused(await as(tok, 'POST', `${E}/me/primary`, { email: 'ann.work@em.test' }), 409, 'GH-10008');
    refused(
      await as(tok, 'POST', `${E}/verify`, {
        email: 'ann.work@em.test',
        code: code === '000000' ? '111111' : '000000',
      }),
      400,
      'GH-61012',
    );
    const ok = await as(tok, 'POST', `${E}/verify`, { email: 'ann.work@em.test', code });
    assert.equal(ok.status, 200, JSON.stringify(ok.body));
    assert.equal(ok.body.verified, true);
    refused(await as(tok, 'POST', `${E}/verify`, { email: 'ann.work@em.test', code }), 409, 'GH-10008');
    // A pending verification code of the primary address dies with it.
    assert.equal((await as(tok, 'POST', `${U}/v1/email/me`, { email: 'ann@em.test' })).status < 300, true);
    const me0 = await as(tok, 'GET', `${E}/me`);
    assert.deepEqual(
      me0.body.map((e: any) => [e.email, e.isPrimary, e.verified]),
      [
        ['ann@em.test', true, false],
        ['ann.work@em.test', false, true],
      ],
    );
    assert.equal(me0.body[0].id, id);

    const p = await as(tok, 'POST', `${E}/me/primary`, { email: 'ann.work@em.test' });
    assert.equal(p.status, 200, JSON.stringify(p.body));
    const u = await user(id);
    assert.equal(u.email, 'ann.work@em.test');
    assert.equal(u.verified, true);
    const me1 = await as(tok, 'GET', `${E}/me`);
    assert.deepEqual(
      me1.body.map((e: any) => [e.email, e.isPrimary, e.verified]),
      [
        ['ann.work@em.test', true, true],
        ['ann@em.test', false, false],
      ],
    );
    assert.equal((await login('ann@em.test')).status, 401);
    assert.equal(claims(await tokenOf('ann.work@em.test')).email, 'ann.work@em.test');
    const voided = await t.db.query(
      `SELECT 1 FROM recovery_codes WHERE user_id = $1 AND purpose = 'verify-email' AND used_at IS NULL`,
      [id],
    );
    assert.equal(voided.rows.length, 0, 'emailed proofs of the old address are void');
    const ev = await t.db.query<{ data: any }>(
      "SELECT data FROM events WHERE event_key = 'user.updated' AND entity_id = $1 ORDER BY seq DESC LIMIT 1",
      [id],
    );
    assert.equal(ev.rows[0].data.previousEmail, 'ann@em.test');
    // The primary cannot be deleted; the secondary can.
    refused(await as(tok, 'DELETE', `${E}/${id}`), 409, 'GH-10008');
    const old = me1.body[1];
    assert.equal((await as(tok, 'DELETE', `${E}/${old.id}`)).status, 200);
    refused(await as(tok, 'DELETE', `${E}/${old.id}`), 404, 'GH-42011');
    assert.equal((await as(tok, 'GET', `${E}/me`)).body.length, 1);
  });

  test('an address belongs to one user, across primaries and secondaries, in any case', async () => {
    const a = await createUser('bea@em.test');
    const b = await createUser('cy@em.test');
    refused(await v('POST', `${E}/vendor/${a}`, { email: 'CY@em.test' }), 409, 'GH-42002');
    assert.equal((await v('POST', `${E}/vendor/${a}`, { email: 'bea2@em.test', isVerified: true })).status, 201);
    refused(await v('POST', `${E}/vendor/${b}`, { email: 'Bea2@em.test' }), 409, 'GH-42002');
    refused(await v('POST', `${E}/vendor/${a}`, { email: 'bea2@em.test', isVerified: true }), 409, 'GH-10008');
    // Other writers of users.email meet the same rule (database triggers).
    refused(
      await t.call('POST', `${U}/v1`, {
        token: vendor,
        body: { email: 'bea2@em.test', name: 'X' },
        headers: { 'gatehouse-tenant-id': TENANT },
      }),
      409,
      'GH-42002',
    );
    refused(await v('PUT', `${U}/v1/${b}/email`, { email: 'bea2@em.test' }), 409, 'GH-42002');
    refused(await v('POST', `${E}/vendor/${a}`, { email: 'not-an-email' }), 400, 'GH-10001');
    const list = await v('GET', `${E}?userIds=${a},${b}&_sortBy=email`);
    assert.equal(list.status, 200, JSON.stringify(list.body));
    assert.deepEqual(
      list.body.items.map((e: any) => e.email),
      ['bea2@em.test', 'bea@em.test', 'cy@em.test'],
    );
    assert.equal(list.body._metadata.totalItems, 3);
    const one = await v('GET', `${E}?_email=BEA2@em.test&_limit=1`);
    assert.deepEqual(
      one.body.items.map((e: any) => [e.userId, e.isPrimary]),
      [[a, false]],
    );
    refused(await v('GET', `${E}?userIds=nope`), 400, 'GH-10001');
  });

  test('vendor routes act on any user; the policy binds only the self-service switch', async () => {
    const id = await createUser('dan@em.test');
    const tok = await tokenOf('dan@em.test');
    const e = await v('POST', `${E}/vendor/${id}`, { email: 'dan2@em.test', isVerified: true });
    assert.equal(e.body.verified, true);
    assert.equal((await v('POST', POLICY, { allowEmailChange: false })).status < 300, true);
    try {
      refused(await as(tok, 'POST', `${E}/me/primary`, { email: 'dan2@em.test' }), 403, 'GH-41004');
      assert.equal((await user(id)).email, 'dan@em.test');
      assert.equal((await v('POST', `${E}/vendor/${id}/primary`, { email: 'dan2@em.test' })).status, 200);
      assert.equal((await user(id)).email, 'dan2@em.test');
    } finally {
      await v('POST', POLICY, { allowEmailChange: true });
    }
    refused(await v('POST', `${E}/vendor/${id}/primary`, { email: 'none@em.test' }), 404, 'GH-42011');
    const me = await as(tok, 'GET', `${E}/me`);
    const old = me.body.find((x: any) => x.email === 'dan@em.test');
    assert.equal((await v('DELETE', `${E}/vendor/${id}/${old.id}`)).status, 200);
    refused(await v('DELETE', `${E}/vendor/${id}/${id}`), 409, 'GH-10008');
    refused(
      await v('POST', `${E}/vendor/00000000-0000-4000-8000-000000000000`, { email: 'z@em.test' }),
      404,
      'GH-42001',
    );
    assert.equal(
      (await as(tok, 'POST', `${E}/vendor/${id}`, { email: 'z@em.test' })).status,
      403,
      'vendor routes refuse user tokens',
    );
  });

  test('a code: re-adding resends it (the new one replaces the old), five wrong tries burn it', async () => {
    await createUser('eve@em.test');
    const tok = await tokenOf('eve@em.test');
    assert.equal((await as(tok, 'POST', E, { email: 'eve2@em.test' })).status, 201);
    const first = await codeFor('eve2@em.test', 1);
    assert.equal((await as(tok, 'POST', E, { email: 'eve2@em.test' })).status, 200);
    const second = await codeFor('eve2@em.test', 2);
    if (first !== second)
      refused(await as(tok, 'POST', `${E}/verify`, { email: 'eve2@em.test', code: first }), 400, 'GH-61012');
    const wrong = second === '000000' ? '111111' : '000000';
    for (let i = 0; i < 3; i++)
      refused(await as(tok, 'POST', `${E}/verify`, { email: 'eve2@em.test', code: wrong }), 400, 'GH-61012');
    refused(await as(tok, 'POST', `${E}/verify`, { email: 'eve2@em.test', code: wrong }), 429, 'GH-61014');
    refused(await as(tok, 'POST', `${E}/verify`, { email: 'eve2@em.test', code: second }), 410, 'GH-61013');
    const me = await as(tok, 'GET', `${E}/me`);
    assert.equal(me.body.find((x: any) => x.email === 'eve2@em.test').verified, false);
  });
});
