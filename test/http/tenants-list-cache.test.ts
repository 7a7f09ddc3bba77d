import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startTestApp, type TestApp } from '../helpers/harness.ts';
import { account } from '../fixtures/builders.ts';

/**
 * A filter the trigram index cannot serve (fewer than three letters or digits in a row) is answered from the ordered
 * ids of its matches, kept per data version (migration 0027). These tests compare it with a three-letter filter that
 * matches the same accounts (read by the query as before) and check that every kind of change, by this server, by
 * another server on the same database or by plain SQL, shows in the next answer.
 */
let t: TestApp;
let other: TestApp;
let vendor: string;
const V1 = '/tenants/resources/tenants/v1';
const V2 = '/tenants/resources/tenants/v2';
const WORDS = ['Maple', 'apple', 'Cedar', 'birch', 'Aspen', 'oak', 'Willow', 'elm'];

before(async () => {
  t = await startTestApp();
  other = await startTestApp({}, { db: t.db });
  vendor = await t.vendorToken();
  // 24 accounts whose names hold "zqx" (so the short filter "zq" and the indexed "zqx" match the same ones), names
  // repeating so that the name sort needs its tie-breaker, and 10 that match neither.
  for (let i = 0; i < 24; i++) {
    await account(t, {
      id: `lc-${String((i * 7) % 24).padStart(2, '0')}`,
      name: `${i % 3 ? 'Zqx' : 'zQx'} ${WORDS[i % 8]}`,
    });
  }
  for (let i = 0; i < 10; i++) await account(t, { id: `other-${i}`, name: `Other ${i}` });
});
after(async () => {
  await other?.close();
  await t?.close();
});

type Page = { ids: string[]; total: number; pages: number };
async function page(app: TestApp, query: string): Promise<Page> {
  const r = await app.call('GET', `${V2}?${query}`, { token: vendor });
  assert.equal(r.status, 200, JSON.stringify(r.body));
  return {
    ids: r.body.items.map((a: any) => a.tenantId),
    total: r.body._metadata.totalItems,
    pages: r.body._metadata.totalPages,
  };
}
/** Every page of a list, 5 at a time, joined. */
async function walk(app: TestApp, query: string): Promise<{ ids: string[]; total: number }> {
  const ids: string[] = [];
  const first = await page(app, `${query}&_limit=5&_offset=0`);
  ids.push(...first.ids);
  for (let p = 1; p < first.pages; p++) ids.push(...(await page(app, `${query}&_limit=5&_offset=${p}`)).ids);
  return { ids, total: first.total };
}
const rename = (app: TestApp, id: string, name: string) =>
  app.call('PUT', `${V2}/${id}`, { token: vendor, body: { name } });

describe('account list: short filters from the cached id list', () => {
  test('every page and the total equal those of the same matches read by the query, for each sort and order', async () => {
    for (const sortBy of ['createdAt', 'name', 'tenantId']) {
      for (const order of ['ASC', 'DESC']) {
        const sort = `_sortBy=${sortBy}&_order=${order}`;
        const expected = (await page(t, `_filter=zqx&${sort}&_limit=200`)).ids;
        assert.equal(expected.length, 24);
        // Twice: the first walk reads and caches the list, the second is served from it.
        for (let round = 0; round < 2; round++) {
          const got = await walk(t, `_filter=ZQ&${sort}`);
          assert.equal(got.total, 24, `${sort} round ${round}`);
          assert.deepEqual(got.ids, expected, `${sort} round ${round}`);
        }
      }
    }
    const asc = (await page(t, '_filter=zq&_sortBy=name&_order=ASC&_limit=200')).ids;
    const desc = (await page(t, '_filter=zq&_sortBy=name&_order=DESC&_limit=200')).ids;
    assert.deepEqual(desc, [...asc].reverse());
  });

  test('a page beyond the end is empty with the true total; one-character and LIKE-character filters work', async () => {
    await page(t, '_filter=zq&_limit=10&_offset=0');
    const beyond = await page(t, '_filter=zq&_limit=10&_offset=7');
    assert.deepEqual(beyond, { ids: [], total: 24, pages: 3 });
    const last = await page(t, '_filter=zq&_limit=10&_offset=2');
    assert.equal(last.ids.length, 4);
    assert.equal((await page(t, '_filter=%25&_limit=200')).total, 0);
    assert.equal((await page(t, '_filter=_&_limit=200')).total, 0);
    const dash = await page(t, '_filter=-&_limit=200&_sortBy=tenantId');
    assert.equal(dash.total, 34);
    assert.deepEqual(dash.ids, [...dash.ids].sort());
  });

  test('creating, renaming and removing a matching account shows in the next page', async () => {
    const q = '_filter=zq&_sortBy=name&_order=ASC&_limit=200';
    const before = await page(t, q);
    assert.equal(before.total, 24);

    await account(t, { id: 'lc-new', name: 'Zqx Aardvark' });
    let now = await page(t, q);
    assert.equal(now.total, 25);
    assert.equal(now.ids[0], 'lc-new', 'sorted by name, the new account comes first');

    // Renamed within the filter: it moves to the end of the name order.
    assert.equal((await rename(t, 'lc-new', 'zqx zzz')).status, 200);
    now = await page(t, q);
    assert.equal(now.total, 25);
    assert.equal(now.ids.at(-1), 'lc-new');

    // Renamed out of the filter, and another one into it.
    assert.equal((await rename(t, 'lc-new', 'Plain')).status, 200);
    assert.equal((await rename(t, 'other-3', 'Zqx Other')).status, 200);
    now = await page(t, q);
    assert.equal(now.total, 25);
    assert.ok(!now.ids.includes('lc-new'));
    assert.ok(now.ids.includes('other-3'));

    assert.equal((await t.call('DELETE', `${V1}/other-3`, { token: vendor })).status, 200);
    assert.equal((await t.call('DELETE', `${V1}/lc-05`, { token: vendor })).status, 200);
    now = await page(t, q);
    assert.equal(now.total, 23);
    assert.deepEqual(
      now.ids,
      before.ids.filter((id) => id !== 'lc-05'),
    );
  });

  test('a change made by another server on the same database, or by SQL, shows in the next page', async () => {
    const q = '_filter=zq&_sortBy=tenantId&_order=DESC&_limit=3';
    const first = await page(t, q);
    assert.equal(first.total, 23);
    assert.deepEqual(first.ids, ['lc-23', 'lc-22', 'lc-21']);

    await account(other, { id: 'lc-zz', name: 'zqx from the other server' });
    let now = await page(t, q);
    assert.equal(now.total, 24);
    assert.deepEqual(now.ids, ['lc-zz', 'lc-23', 'lc-22']);

    assert.equal((await other.call('DELETE', `${V1}/lc-23`, { token: vendor })).status, 200);
    now = await page(t, q);
    assert.equal(now.total, 23);
    assert.deepEqual(now.ids, ['lc-zz', 'lc-22', 'lc-21']);

    await t.db.query(`UPDATE tenants SET name = 'Renamed by SQL' WHERE tenant_id = 'lc-22'`);
    now = await page(t, q);
    assert.equal(now.total, 22);
    assert.deepEqual(now.ids, ['lc-zz', 'lc-21', 'lc-20']);
    // The other server answers the same (its own cache read before the changes is not used).
    assert.deepEqual(await page(other, q), now);
  });

  test('concurrent requests for one list after a change all answer the new list (they share one read of it)', async () => {
    const q = '_filter=zq&_sortBy=createdAt&_order=DESC';
    await page(t, `${q}&_limit=5`);
    await account(other, { id: 'lc-burst', name: 'zqx burst' });
    const expected = (await page(other, `_filter=zqx&_sortBy=createdAt&_order=DESC&_limit=200`)).ids;
    assert.equal(expected[0], 'lc-burst');
    const pages = await Promise.all([0, 1, 2, 3, 4, 0, 4].map((n) => page(t, `${q}&_limit=5&_offset=${n}`)));
    for (const [i, n] of [0, 1, 2, 3, 4, 0, 4].entries()) {
      assert.deepEqual(pages[i].ids, expected.slice(n * 5, n * 5 + 5), `page ${n}`);
      assert.equal(pages[i].total, expected.length);
    }
  });

  test('an update of what no list reads keeps the cached lists; an update of a name moves them (migration 0028)', async () => {
    const version = async () =>
      (await t.db.query<{ v: string }>('SELECT coalesce(sum(changes), 0)::text AS v FROM tenant_live_count')).rows[0].v;
    const q = '_filter=zq&_sortBy=name&_order=ASC&_limit=200';
    const before = await page(t, q);
    const v0 = await version();
    const edit = await t.call('PUT', `${V2}/lc-02`, {
      token: vendor,
      body: { website: 'https://lc-02.example', status: 'suspended', metadata: JSON.stringify({ tier: 'gold' }) },
    });
    assert.equal(edit.status, 200, JSON.stringify(edit.body));
    assert.equal(await version(), v0, 'website, status and metadata decide no list: same data version');
    const same = await page(t, q);
    assert.deepEqual(same, before);
    // The page's rows are read fresh: the edited account shows its new website from the kept list.
    const row = (await t.call('GET', `${V2}?_filter=zq&_tenantIds=lc-02`, { token: vendor })).body.items[0];
    assert.equal(row.website, 'https://lc-02.example');

    // The same statement through SQL, and one that sets a name to itself: nothing a list reads changed.
    await t.db.query(`UPDATE tenants SET metadata = '{"by":"sql"}'::jsonb, name = name WHERE tenant_id LIKE 'lc-%'`);
    assert.equal(await version(), v0);

    assert.equal((await rename(t, 'lc-02', 'zqx 0000 first')).status, 200);
    assert.notEqual(await version(), v0, 'a rename moves the version');
    const now = await page(t, q);
    assert.equal(now.ids[0], 'lc-02');
    assert.equal(now.total, before.total);
  });

  test('a filter the trigram index serves that matched more than ACCOUNT_LIST_BROAD_MATCHES is answered from the cache, the same', async () => {
    const broad = await startTestApp({ ACCOUNT_LIST_BROAD_MATCHES: '20' }, { db: t.db });
    try {
      const size = () => broad.ctx.tenants.listCacheSize()!.entries;
      const q = '_filter=zqx&_sortBy=name&_order=DESC';
      const before = size();
      const first = await page(broad, `${q}&_limit=5&_offset=0`);
      assert.ok(first.total > 20, `more than the threshold match (${first.total})`);
      assert.equal(size(), before, 'the first answer counts the matches by the query');
      const all = await walk(broad, q);
      assert.equal(size(), before + 1, 'then the ids are read once and kept');
      assert.deepEqual(all, await walk(t, q), 'the same pages and total as the query answers');
      // A rename shows at once (the data version moved).
      assert.equal((await rename(broad, 'lc-10', 'zqx zzzz last')).status, 200);
      const now = await page(broad, `${q}&_limit=1&_offset=0`);
      assert.deepEqual(now.ids, ['lc-10']);
      assert.deepEqual(now, await page(t, `${q}&_limit=1&_offset=0`));
      // Below the threshold nothing is kept: a narrow filter stays with the query.
      const held = size();
      await walk(broad, '_filter=other&_sortBy=name&_order=ASC');
      assert.equal(size(), held);
    } finally {
      await broad.close();
    }
  });

  test('_tenantIds with a short filter: only the listed accounts that match, whatever was read before', async () => {
    const all = await page(t, '_filter=zq&_limit=200&_sortBy=tenantId');
    assert.ok(all.total > 3);
    const r = await page(t, '_filter=zq&_tenantIds=lc-02,other-1,lc-10,lc-22,missing&_sortBy=tenantId&_order=DESC');
    assert.deepEqual(r, { ids: ['lc-10', 'lc-02'], total: 2, pages: 1 });
    const second = await page(t, '_filter=zq&_tenantIds=lc-02,lc-10&_sortBy=tenantId&_limit=1&_offset=1');
    assert.deepEqual(second, { ids: ['lc-10'], total: 2, pages: 2 });
    // And the filter without them still answers every match.
    assert.deepEqual(await page(t, '_filter=zq&_limit=200&_sortBy=tenantId'), all);
  });
});
