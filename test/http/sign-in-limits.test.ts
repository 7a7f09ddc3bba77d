import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { PASSWORD, account, user } from '../fixtures/builders.ts';
import { openTestDb } from '../helpers/db.ts';
import { startTestApp, type TestApp } from '../helpers/harness.ts';
import type { ClosableDb } from '../../src/storage/db.ts';

/** The sign-in limits count in the database every instance shares: failures per identifier, address, both; a flood. */

const A = '/identity/resources/auth/v1';
const signIn = (t: TestApp, email: string, password: string, remoteAddress = '203.0.113.7') =>
  t.call('POST', `${A}/user`, { body: { email, password }, remoteAddress });

describe('sign-in limits shared by two instances on one database', () => {
  let db: ClosableDb;
  let one: TestApp;
  let two: TestApp;
  const env = {
    LOGIN_RATE_LIMIT_PER_IP: '4',
    LOGIN_RATE_LIMIT_PER_IDENTIFIER: '3',
    LOGIN_RATE_LIMIT_PER_IP_IDENTIFIER: '3',
    LOGIN_FLOOD_LIMIT_PER_IP: '12',
  };
  before(async () => {
    db = await openTestDb();
    one = await startTestApp(env, { db });
    two = await startTestApp(env, { db });
    await account(one, { id: 'lim' });
    for (const n of [1, 2, 3, 4, 5, 6, 7, 8]) await user(one, 'lim', { email: `u${n}@lim.test` });
  });
  after(async () => {
    await one?.close();
    await two?.close();
    await db?.close();
  });

  test('successful sign-ins do not count against the address: more than its failure limit all succeed', async () => {
    for (const n of [1, 2, 3, 4, 5, 6]) {
      const r = await signIn(n % 2 ? one : two, `u${n}@lim.test`, PASSWORD, '198.51.100.1');
      assert.equal(r.status, 200, JSON.stringify(r.body));
    }
  });

  test('failures of one identifier spread over both instances are refused at the limit, not twice it', async () => {
    const statuses = [];
    for (let i = 0; i < 4; i++) statuses.push((await signIn(i % 2 ? two : one, 'u7@lim.test', `wrong ${i}`)).status);
    assert.deepEqual(statuses, [401, 401, 401, 429]);
    const r = await signIn(one, 'u7@lim.test', PASSWORD, '198.51.100.2');
    assert.equal(r.status, 429, 'the identifier is limited from any address');
    assert.ok(Number(r.headers['retry-after']) >= 1);
    assert.equal(r.body.errorCode, 'GH-10006');
  });

  test('failures from one address across identifiers reach the address limit', async () => {
    const ip = '192.0.2.9';
    assert.equal((await signIn(one, 'u1@lim.test', 'wrong', ip)).status, 401);
    assert.equal((await signIn(two, 'u2@lim.test', 'wrong', ip)).status, 401);
    assert.equal((await signIn(one, 'nobody@lim.test', 'wrong', ip)).status, 401);
    assert.equal((await signIn(two, 'u3@lim.test', 'wrong', ip)).status, 401);
    const r = await signIn(one, 'u8@lim.test', PASSWORD, ip);
    assert.equal(r.status, 429, 'even the right password of another user, from that address');
    assert.equal((await signIn(two, 'u8@lim.test', PASSWORD, '192.0.2.10')).status, 200, 'another address signs in');
  });

  test('every attempt counts per address under the flood ceiling', async () => {
    const ip = '192.0.2.77';
    const statuses = [];
    for (let i = 0; i < 13; i++) statuses.push((await signIn(i % 2 ? two : one, 'u6@lim.test', PASSWORD, ip)).status);
    assert.deepEqual(statuses.slice(0, 12), Array(12).fill(200));
    assert.equal(statuses[12], 429);
  });

  test('a limit store that cannot be reached refuses sign-in with 503, never lets it through', async () => {
    await db.query('ALTER TABLE rate_limit_counters RENAME TO rate_limit_counters_away');
    try {
      const r = await signIn(one, 'u5@lim.test', PASSWORD, '192.0.2.200');
      assert.equal(r.status, 503, JSON.stringify(r.body));
      assert.equal(r.body.errorCode, 'GH-10012');
    } finally {
      await db.query('ALTER TABLE rate_limit_counters_away RENAME TO rate_limit_counters');
    }
    assert.equal((await signIn(one, 'u5@lim.test', PASSWORD, '192.0.2.200')).status, 200);
  });
});
