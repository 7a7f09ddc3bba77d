import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startTestApp, type TestApp } from '../helpers/harness.ts';
import { account, signedIn, type User, user } from '../fixtures/builders.ts';

let t: TestApp;
let vendor: string;
const U = '/identity/resources/users';
const N = '/identity/resources/usernames/v1';
const PASSWORD = 'a long enough password 42!';
const people: Record<string, User> = {};

const tokenOf = (who: string, tenantId = 'un-a') => t.userToken({ tenantId, sub: people[who].id, permissions: ['*'] });
/** A signed-in session of the user: changing a username is an identity change (the user's own recent session). */
const sessionOf = async (who: string) => (await signedIn(t, people[who])).accessToken;

before(async () => {
  t = await startTestApp();
  vendor = await t.vendorToken();
  for (const [id, parent] of [
    ['un-a', undefined],
    ['un-b', undefined],
    ['un-a-sub', 'un-a'],
  ] as const) {
    await account(t, { id, parentTenantId: parent });
  }
  people.jon = await user(t, 'un-a', { email: 'jonathan@un.test', name: 'Jonathan Smith', password: PASSWORD });
  people.maria = await user(t, 'un-a', { email: 'maria@un.test', name: 'Maria Garcia', password: PASSWORD });
  people.snow = await user(t, 'un-a', {
    email: 'jsnow@un.test',
    name: 'Jon Snow',
    password: PASSWORD,
    username: 'kingnorth',
  });
  people.other = await user(t, 'un-b', { email: 'jonas@un-b.test', name: 'Jonas Other', password: PASSWORD });
  people.sub = await user(t, 'un-a-sub', { email: 'subby@un.test', name: 'Sub Quixotic', password: PASSWORD });
});
after(async () => t?.close());

describe('usernames', () => {
  test('a user sets their username (201), changes it (200), reads it; sign-in by username works', async () => {
    const token = await sessionOf('jon');
    const r = await t.call('POST', N, { token, body: { username: 'jsmith' } });
    assert.equal(r.status, 201, JSON.stringify(r.body));
    assert.deepEqual(r.body, { username: 'jsmith', userId: people.jon.id });
    const again = await t.call('POST', N, { token, body: { username: 'J.Smith' } });
    assert.equal(again.status, 200);
    const me = await t.call('GET', `${N}/me`, { token });
    assert.deepEqual(me.body, { username: 'J.Smith', userId: people.jon.id });
    const signIn = await t.call('POST', '/identity/resources/auth/v1/user', {
      body: { username: 'j.smith', password: PASSWORD },
    });
    assert.equal(signIn.status, 200, JSON.stringify(signIn.body));
    assert.equal(
      (await t.call('GET', `/identity/resources/vendor-only/users/v1/${people.jon.id}`, { token: vendor })).body
        .username,
      'J.Smith',
    );
  });

  test('a taken username (any case) is a 409 and changes nothing; bad input is a 400', async () => {
    const r = await t.call('POST', N, { token: await sessionOf('maria'), body: { username: 'KINGNORTH' } });
    assert.equal(r.status, 409);
    assert.equal(r.body.errorCode, 'GH-42003');
    assert.equal((await t.call('GET', `${N}/me`, { token: await tokenOf('maria') })).status, 404);
    for (const body of [
      {},
      { username: '' },
      { username: 'has space' },
      { username: 'x'.repeat(129) },
      { username: 7 },
    ]) {
      const bad = await t.call('POST', N, { token: await sessionOf('maria'), body });
      assert.equal(bad.status, 400, JSON.stringify(body));
      assert.equal(bad.body.errorCode, 'GH-10001');
    }
  });

  test('an environment token names the user with gatehouse-user-id (400 without it)', async () => {
    const missing = await t.call('POST', N, { token: vendor, body: { username: 'maria.g' } });
    assert.equal(missing.status, 400);
    assert.equal(missing.body.errorCode, 'GH-64009');
    const r = await t.call('POST', N, {
      token: vendor,
      headers: { 'gatehouse-user-id': people.maria.id },
      body: { username: 'maria.g' },
    });
    assert.equal(r.status, 201, JSON.stringify(r.body));
    const me = await t.call('GET', `${N}/me`, { token: vendor, headers: { 'gatehouse-user-id': people.maria.id } });
    assert.deepEqual(me.body, { username: 'maria.g', userId: people.maria.id });
    const unknown = await t.call('POST', N, {
      token: vendor,
      headers: { 'gatehouse-user-id': '00000000-0000-4000-8000-000000000000' },
      body: { username: 'ghost' },
    });
    assert.equal(unknown.status, 404);
  });

  test('the list: a page of {username, userId}, prefix, userIds, sort, account scope', async () => {
    await t.call('POST', N, {
      token: vendor,
      headers: { 'gatehouse-user-id': people.other.id },
      body: { username: 'jonas' },
    });
    const all = await t.call('GET', N, { token: vendor });
    assert.equal(all.status, 200, JSON.stringify(all.body));
    assert.deepEqual(
      all.body.items.map((i: any) => i.username),
      ['J.Smith', 'jonas', 'kingnorth', 'maria.g'],
    );
    assert.equal(all.body._metadata.totalItems, 4);
    const prefixed = await t.call('GET', `${N}?_usernamePrefix=J&_sortBy=username&_order=DESC`, { token: vendor });
    assert.deepEqual(
      prefixed.body.items.map((i: any) => i.username),
      ['jonas', 'J.Smith'],
    );
    const byIds = await t.call('GET', `${N}?userIds=${people.snow.id},${people.maria.id}`, { token: vendor });
    const env = t.ctx.environment.id;
    assert.deepEqual(byIds.body.items, [
      { vendorId: env, userId: people.snow.id, username: 'kingnorth' },
      { vendorId: env, userId: people.maria.id, username: 'maria.g' },
    ]);
    const scoped = await t.call('GET', N, { token: await tokenOf('jon') });
    assert.ok(!scoped.body.items.some((i: any) => i.username === 'jonas'), 'a user token sees its account only');
    const paged = await t.call('GET', `${N}?_limit=1&_offset=1`, { token: vendor });
    assert.deepEqual(
      paged.body.items.map((i: any) => i.username),
      ['jonas'],
    );
    assert.equal((await t.call('GET', `${N}?_sortBy=email`, { token: vendor })).status, 400);
  });

  test('delete: a user removes only their own (another one is a 404); then /me is a 404', async () => {
    const maria = await sessionOf('maria');
    const foreign = await t.call('DELETE', `${N}/kingnorth`, { token: maria });
    assert.equal(foreign.status, 404);
    assert.equal(foreign.body.errorCode, 'GH-42009');
    const own = await t.call('DELETE', `${N}/MARIA.G`, { token: maria });
    assert.equal(own.status, 200, JSON.stringify(own.body));
    assert.equal((await t.call('GET', `${N}/me`, { token: maria })).status, 404);
    const scoped = await t.call('DELETE', `${N}/jonas`, { token: vendor, headers: { 'gatehouse-tenant-id': 'un-a' } });
    assert.equal(scoped.status, 404, 'a tenant header limits the vendor to that account');
    assert.equal((await t.call('DELETE', `${N}/jonas`, { token: vendor })).status, 200);
    assert.equal((await t.call('DELETE', `${N}/jonas`, { token: vendor })).status, 404);
  });
});

describe('fuzzy user search', () => {
  const search = async (
    query: string,
    token?: string,
    headers: Record<string, string> = { 'gatehouse-tenant-id': 'un-a' },
  ) => {
    const r = await t.call('GET', `${U}/v1/query/phrase?${query}`, { token: token ?? vendor, headers });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    return r.body.items.map((u: any) => u.email);
  };

  test('substring matches first, then words like the phrase (typos); other accounts stay out', async () => {
    assert.deepEqual(await search('_phrase=snow'), ['jsnow@un.test']);
    assert.deepEqual(await search('_phrase=garcai'), ['maria@un.test'], 'a typo still finds Garcia');
    const jon = await search('_phrase=jon');
    assert.deepEqual([...jon].sort(), ['jonathan@un.test', 'jsnow@un.test']);
    assert.ok(!jon.includes('jonas@un-b.test'));
    assert.deepEqual(
      [...(await search('_phrase=jonh'))].sort(),
      ['jonathan@un.test', 'jsnow@un.test'],
      'jonh is like jonathan and jon',
    );
    assert.deepEqual(await search('_phrase=zzzq'), []);
  });

  test('records are full users; exact identifier, name prefix, limit, sub-accounts', async () => {
    const r = await t.call('GET', `${U}/v1/query/phrase?_phrase=maria`, { token: await tokenOf('jon') });
    assert.equal(r.body.items[0].id, people.maria.id);
    assert.equal(r.body.items[0].tenantId, 'un-a');
    assert.deepEqual(await search('_identifierType=username&_identifier=KingNorth'), ['jsnow@un.test']);
    assert.deepEqual(await search('_identifier=maria@un.test'), ['maria@un.test']);
    assert.deepEqual(await search('_namePrefix=JON%20S'), ['jsnow@un.test']);
    assert.equal((await search('_limit=1')).length, 1);
    assert.deepEqual(await search('_phrase=quixotic'), []);
    assert.deepEqual(await search('_phrase=quixotic&_includeSubTenants=true'), ['subby@un.test']);
    assert.equal(
      (await search('_phrase=jonas', vendor, {}))[0],
      'jonas@un-b.test',
      'a vendor without header searches the environment, exact match first',
    );
  });

  test('bad input is a 400', async () => {
    for (const q of [
      '_limit=0',
      '_limit=201',
      '_identifierType=phone',
      '_includeSubTenants=maybe',
      `_phrase=${'x'.repeat(321)}`,
    ]) {
      const r = await t.call('GET', `${U}/v1/query/phrase?${q}`, { token: vendor });
      assert.equal(r.status, 400, q);
    }
  });
});
