import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startTestApp, VENDOR, type TestApp } from '../helpers/harness.ts';
import { PASSWORD, account, signedIn, user } from '../fixtures/builders.ts';
import { actionOf, deriveAction } from '../../src/modules/audit/actions.ts';
import type { ClosableDb, Db } from '../../src/storage/db.ts';
import { openTestDb } from '../helpers/db.ts';

// What an account administrator reads in the audit log: catalogue event names as actions, a sentence saying who did
// what to whom, and failed sign-ins of the account's users in the account's log.

const U = '/identity/resources/users';
const H = { 'gatehouse-tenant-id': 'aa-acme' };

let t: TestApp;
let vendor: string;
let bob: string;
let bobId: string;

before(async () => {
  t = await startTestApp();
  vendor = await t.vendorToken();
  await account(t, { id: 'aa-acme', name: 'Acme Corp' });
  const roles = (await t.call('GET', '/identity/resources/roles/v1', { token: vendor })).body as {
    id: string;
    key: string;
  }[];
  const admin = roles.find((r) => r.key === 'admin')!;
  const made = await user(t, 'aa-acme', { email: 'bob@aa.test', roleIds: [admin.id], fields: { verified: true } });
  bobId = made.id;
  bob = (await signedIn(t, made)).accessToken;
});
after(async () => t?.close());

/** The account's log as its administrator reads it (oldest first), entries after `since`. */
async function accountLog(since: string) {
  const reader = await t.userToken({ tenantId: 'aa-acme', permissions: ['fe.secure.read.audits'] });
  const r = await t.call('GET', `/audits?from=${encodeURIComponent(since)}&sortDirection=asc&count=1000`, {
    token: reader,
  });
  assert.equal(r.status, 200, JSON.stringify(r.body));
  return r.body.data as any[];
}

describe('audit actions an administrator can read', () => {
  test('a user created and deleted by an administrator: catalogue names, the target by email, the actor by email', async () => {
    const since = new Date().toISOString();
    const alice = await t.call('POST', `${U}/v1`, {
      token: bob,
      body: { email: 'alice@aa.test', name: 'Alice', password: PASSWORD },
    });
    assert.equal(alice.status, 201, JSON.stringify(alice.body));
    assert.equal((await t.call('DELETE', `${U}/v1/${alice.body.id}`, { token: bob })).status, 200);
    const log = await accountLog(since);
    assert.deepEqual(
      log.map((e) => [e.action, e.outcome, e.target.id, e.data.description]),
      [
        ['user.created', 'success', alice.body.id, 'user.created alice@aa.test by bob@aa.test'],
        ['user.deleted', 'success', alice.body.id, 'user.deleted alice@aa.test by bob@aa.test'],
      ],
    );
    assert.equal(log[0].data.targetDisplay, 'alice@aa.test');
    assert.equal(log[0].data.actorDisplay, 'bob@aa.test');
    assert.equal(log[0].actor.id, bobId);
  });

  test("a failed sign-in of a known user is in that user's account; an unknown email stays anonymous and accountless", async () => {
    const since = new Date().toISOString();
    const carol = await user(t, 'aa-acme', { email: 'carol@aa.test', fields: { verified: true } });
    const SIGN_IN = '/identity/resources/auth/v1/user';
    assert.equal(
      (await t.call('POST', SIGN_IN, { body: { email: 'carol@aa.test', password: 'wrong password!' } })).status,
      401,
    );
    assert.equal(
      (await t.call('POST', SIGN_IN, { body: { email: 'nobody@aa.test', password: 'wrong password!' } })).status,
      401,
    );
    const log = await accountLog(since);
    const failed = log.filter((e) => e.action === 'user.sign_in');
    assert.equal(failed.length, 1, "only the known user's failure is in the account");
    assert.equal(failed[0].outcome, 'failure');
    assert.equal(failed[0].tenantId, 'aa-acme');
    assert.deepEqual(failed[0].target, { type: 'user', id: carol.id });
    assert.deepEqual(failed[0].actor, { type: 'anonymous', id: null });
    assert.match(failed[0].data.description, /^user\.sign_in carol@aa\.test by anonymous: failed \(GH-/);
    const all = (
      await t.call('GET', `/audits?from=${encodeURIComponent(since)}&action=user.sign_in`, { token: vendor })
    ).body.data;
    const unknown = all.find((e: any) => e.data.identifier === 'nobody@aa.test');
    assert.equal(unknown.tenantId, null);
    assert.deepEqual(unknown.target, { type: null, id: null });
  });

  test('an account update by the vendor names the account; a write without a catalogue event has a dotted name', async () => {
    const since = new Date().toISOString();
    assert.equal(
      (await t.call('PUT', '/tenants/resources/tenants/v1/aa-acme', { token: vendor, body: { name: 'Acme Inc' } }))
        .status,
      200,
    );
    const group = await t.call('POST', '/identity/resources/groups/v1', {
      token: vendor,
      headers: H,
      body: { name: 'Auditors' },
    });
    assert.ok(group.status < 300, JSON.stringify(group.body));
    const log = await accountLog(since);
    assert.deepEqual(
      log.map((e) => [e.action, e.data.description]),
      [
        ['account.updated', `account.updated Acme Inc by vendor ${VENDOR.clientId}`],
        ['group.created', `group.created Auditors by vendor ${VENDOR.clientId}`],
      ],
    );
  });

  test('no write is recorded under its HTTP route any more; derived names are stable', () => {
    assert.equal(actionOf('POST', `${U}/v1`), 'user.created');
    assert.equal(actionOf('POST', `${U}/v1/:userId/lock`), 'user.locked');
    assert.equal(actionOf('POST', '/identity/resources/auth/v1/user'), 'user.sign_in');
    assert.equal(deriveAction('POST', `${U}/v1/:userId/roles`), 'user.role.created');
    assert.equal(deriveAction('DELETE', '/identity/resources/roles/v1/:roleId'), 'role.deleted');
    assert.equal(
      deriveAction('PUT', '/tenants/resources/sub-tenants/v1/:tenantId/management'),
      'sub_account.management.updated',
    );
    assert.equal(
      deriveAction('POST', '/identity/resources/configurations/v1/lockout-policy'),
      'configuration.lockout_policy.created',
    );
    assert.equal(deriveAction('POST', '/webhook/:id/test'), 'webhook.test');
    assert.equal(deriveAction('POST', '/directory/resources/scim/v2.0/:configId/Users/.search'), 'scim.user.search');
  });
});

describe('a wrong password costs the same work whether or not the email has a user', () => {
  let app: TestApp;
  let inner: ClosableDb;
  let log: string[] | undefined;
  // Every statement the app sends, as text, while `log` is set (transactions marked), so both paths can be compared.
  const wrap = (q: Db): Db => ({
    async query(sql, params) {
      log?.push(sql.replace(/\s+/g, ' ').trim());
      return q.query(sql, params);
    },
    transaction(fn) {
      log?.push('<transaction>');
      return q.transaction((tx) => fn(wrap(tx)));
    },
  });
  before(async () => {
    inner = await openTestDb();
    app = await startTestApp({}, { db: { ...wrap(inner), kind: inner.kind, close: async () => {} }, jobs: false });
    await account(app, { id: 'aa-time', name: 'T' });
    await user(app, 'aa-time', { email: 'known@aa.test', fields: { verified: true } });
  });
  after(async () => {
    await app?.close();
    await inner?.close();
  });

  const statementsOf = async (email: string) => {
    log = [];
    const r = await app.call('POST', '/identity/resources/auth/v1/user', {
      body: { email, password: 'not the password' },
    });
    assert.equal(r.status, 401);
    const out = log;
    log = undefined;
    return out;
  };

  // The known user's failure event and the unknown identifier's decoy row are the same step: a committed write.
  const step = (sql: string) => (/^INSERT INTO events |^UPDATE sign_in_decoys /.test(sql) ? '<failure record>' : sql);

  test('the same statements in the same order, each committed (an unknown email leaves no event)', async () => {
    // Once each first: settings read once and cached (captcha, lockout, ...) are out of the comparison.
    await statementsOf('known@aa.test');
    await statementsOf('unknown@aa.test');
    const known = await statementsOf('known@aa.test');
    const unknown = await statementsOf('unknown@aa.test');
    assert.ok(known.includes('<transaction>'), 'the known path records the failure in a transaction');
    assert.deepEqual(unknown.map(step), known.map(step));
    assert.ok(
      unknown.some((x) => x.startsWith('UPDATE sign_in_decoys ')),
      'the unknown path commits a write too',
    );
    const events = await inner.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM events WHERE event_key = 'user.sign_in_failed' AND data->>'email' = 'unknown@aa.test'`,
    );
    assert.equal(events.rows[0].n, 0);
    const counted = await inner.query<{ failed_attempts: number }>(
      `SELECT failed_attempts FROM users WHERE email = 'known@aa.test'`,
    );
    assert.equal(counted.rows[0].failed_attempts, 2);
  });
});
