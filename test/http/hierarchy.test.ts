import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { ANCESTORS_SQL, DESCENDANTS_SQL } from '../../src/modules/hierarchy/store.ts';
import { startTestApp, type Reply, type TestApp } from '../helpers/harness.ts';
import { account } from '../fixtures/builders.ts';

const H = '/tenants/resources/hierarchy/v1';
const SUB = '/tenants/resources/sub-tenants/v1';
const READ = 'fe.account-hierarchy.read.subaccount';
const WRITE = 'fe.account-hierarchy.write.subaccount';

let t: TestApp;
let vendor: string;
before(async () => {
  t = await startTestApp();
  vendor = await t.vendorToken();
});
after(async () => t?.close());

const hdr = (tenantId: string) => ({ 'gatehouse-tenant-id': tenantId });
const user = (tenantId: string, permissions = [READ, WRITE]) => t.userToken({ tenantId, permissions });

function fails(r: Reply, status: number, errorCode: string, message?: RegExp) {
  assert.equal(r.status, status, JSON.stringify(r.body));
  assert.equal(r.body.errorCode, errorCode);
  assert.ok(Array.isArray(r.body.errors) && r.body.errors.length > 0);
  if (message) assert.match(r.body.errors.join(' '), message);
}

async function assign(parentTenantId: string, childTenantId: string) {
  const r = await t.call('POST', H, { token: vendor, body: { parentTenantId, childTenantId } });
  assert.equal(r.status, 201, JSON.stringify(r.body));
  return r.body;
}
const getAccount = async (id: string) =>
  (await t.call('GET', `/tenants/resources/tenants/v2/${id}`, { token: vendor })).body;
const subs = async (id: string) => (await t.call('GET', H, { token: vendor, headers: hdr(id) })).body;
const parents = async (id: string) => (await t.call('GET', `${H}/parents`, { token: vendor, headers: hdr(id) })).body;
const tree = async (id: string) => (await t.call('GET', `${H}/tree`, { token: vendor, headers: hdr(id) })).body;
const ids = (list: { tenantId: string }[]) => list.map((e) => e.tenantId);

/** Builds `spec` ({id: parentId | null}) as accounts, parents first. */
async function build(spec: Record<string, string | null>, names: Record<string, string> = {}) {
  for (const [id, parent] of Object.entries(spec)) {
    await account(t, { id, name: names[id] ?? id });
    if (parent) await assign(parent, id);
  }
}

describe('assign and detach (vendor)', () => {
  test('assign answers 201 with the child account; the parent sees it', async () => {
    await account(t, { id: 'as-p', name: 'Parent' });
    await account(t, { id: 'as-c', name: 'Child', fields: { status: 'active' } });
    const r = await t.call('POST', H, { token: vendor, body: { parentTenantId: 'as-p', childTenantId: 'as-c' } });
    assert.equal(r.status, 201);
    assert.equal(r.body.tenantId, 'as-c');
    assert.equal(r.body.name, 'Child');
    assert.equal(r.body.status, 'active');
    assert.equal(r.body.parentTenantId, 'as-p');
    assert.equal((await getAccount('as-c')).parentTenantId, 'as-p');
    assert.deepEqual(await subs('as-p'), [{ tenantId: 'as-c', tenantName: 'Child', level: 1 }]);
  });

  test('unknown or removed accounts are 404 naming the field', async () => {
    await account(t, { id: 'nf-a' });
    await account(t, { id: 'nf-gone' });
    await t.call('DELETE', '/tenants/resources/tenants/v1/nf-gone', { token: vendor });
    fails(
      await t.call('POST', H, { token: vendor, body: { parentTenantId: 'nf-none', childTenantId: 'nf-a' } }),
      404,
      'GH-30001',
      /parentTenantId nf-none/,
    );
    fails(
      await t.call('POST', H, { token: vendor, body: { parentTenantId: 'nf-a', childTenantId: 'nf-none' } }),
      404,
      'GH-30001',
      /childTenantId nf-none/,
    );
    fails(
      await t.call('POST', H, { token: vendor, body: { parentTenantId: 'nf-gone', childTenantId: 'nf-a' } }),
      404,
      'GH-30001',
      /parentTenantId nf-gone/,
    );
    assert.equal((await getAccount('nf-a')).parentTenantId, null);
  });

  test('self-parenting and a parent below the child are 409 HIERARCHY_CYCLE; nothing changes', async () => {
    await build({ 'cy-a': null, 'cy-b': 'cy-a', 'cy-c': 'cy-b' });
    fails(
      await t.call('POST', H, { token: vendor, body: { parentTenantId: 'cy-b', childTenantId: 'cy-b' } }),
      409,
      'GH-30003',
      /own parent/,
    );
    fails(
      await t.call('POST', H, { token: vendor, body: { parentTenantId: 'cy-c', childTenantId: 'cy-a' } }),
      409,
      'GH-30003',
      /cycle/,
    );
    fails(
      await t.call('POST', H, { token: vendor, body: { parentTenantId: 'cy-b', childTenantId: 'cy-a' } }),
      409,
      'GH-30003',
    );
    assert.equal((await getAccount('cy-a')).parentTenantId, null);
    assert.deepEqual(ids(await parents('cy-c')), ['cy-b', 'cy-a']);
  });

  test('re-assigning moves the account with its subtree', async () => {
    await build({ 'mv-p1': null, 'mv-p2': null, 'mv-c': 'mv-p1', 'mv-g': 'mv-c' });
    const r = await assign('mv-p2', 'mv-c');
    assert.equal(r.parentTenantId, 'mv-p2');
    assert.deepEqual(await subs('mv-p1'), []);
    assert.deepEqual(await subs('mv-p2'), [
      { tenantId: 'mv-c', tenantName: 'mv-c', level: 1 },
      { tenantId: 'mv-g', tenantName: 'mv-g', level: 2 },
    ]);
    assert.deepEqual(await parents('mv-g'), [
      { tenantId: 'mv-c', tenantName: 'mv-c', level: 1 },
      { tenantId: 'mv-p2', tenantName: 'mv-p2', level: 2 },
    ]);
  });

  test('DELETE detaches (childTenantId or tenantId); no parent is 404 NOT_IN_HIERARCHY', async () => {
    await build({ 'dt-p': null, 'dt-c': 'dt-p', 'dt-g': 'dt-c', 'dt-d': 'dt-p' });
    const r = await t.call('DELETE', H, { token: vendor, body: { childTenantId: 'dt-c' } });
    assert.equal(r.status, 200);
    assert.equal(r.body.tenantId, 'dt-c');
    assert.equal(r.body.parentTenantId, null);
    assert.deepEqual(ids(await subs('dt-c')), ['dt-g'], 'its own sub-accounts stay');
    assert.deepEqual(ids(await subs('dt-p')), ['dt-d']);
    fails(await t.call('DELETE', H, { token: vendor, body: { childTenantId: 'dt-c' } }), 404, 'GH-30004');
    const alias = await t.call('DELETE', H, { token: vendor, body: { tenantId: 'dt-d' } });
    assert.equal(alias.status, 200);
    assert.equal(alias.body.parentTenantId, null);
    fails(
      await t.call('DELETE', H, { token: vendor, body: { childTenantId: 'dt-none' } }),
      404,
      'GH-30001',
      /childTenantId dt-none/,
    );
  });

  test('bad bodies are 400 naming the field; nothing changes', async () => {
    await build({ 'bb-p': null, 'bb-c': 'bb-p' });
    fails(
      await t.call('POST', H, { token: vendor, body: { parentTenantId: 'bb-p' } }),
      400,
      'GH-10001',
      /body\.childTenantId is required/,
    );
    fails(
      await t.call('POST', H, { token: vendor, body: { parentTenantId: 5, childTenantId: 'bb-c' } }),
      400,
      'GH-10001',
      /body\.parentTenantId must be string/,
    );
    fails(
      await t.call('POST', H, { token: vendor, body: { parentTenantId: 'bad id!', childTenantId: 'bb-c' } }),
      400,
      'GH-10001',
      /body\.parentTenantId must match pattern/,
    );
    fails(await t.call('DELETE', H, { token: vendor, body: {} }), 400, 'GH-10001', /body\.childTenantId is required/);
    fails(await t.call('DELETE', H, { token: vendor }), 400, 'GH-10001', /body\.childTenantId is required/);
    fails(
      await t.call('DELETE', H, { token: vendor, body: { childTenantId: 'bb-c', tenantId: 'bb-p' } }),
      400,
      'GH-10001',
      /different accounts/,
    );
    fails(
      await t.call('DELETE', H, { token: vendor, body: { childTenantId: ['bb-c'] } }),
      400,
      'GH-10001',
      /body\.childTenantId/,
    );
    assert.equal((await getAccount('bb-c')).parentTenantId, 'bb-p');
  });

  test('assign and detach take environment tokens only', async () => {
    await build({ 'ut-p': null, 'ut-c': 'ut-p' });
    const u = await user('ut-p', ['*']);
    fails(
      await t.call('POST', H, { token: u, body: { parentTenantId: 'ut-p', childTenantId: 'ut-c' } }),
      403,
      'GH-20003',
    );
    fails(await t.call('DELETE', H, { token: u, body: { childTenantId: 'ut-c' } }), 403, 'GH-20003');
    fails(await t.call('POST', H, { body: { parentTenantId: 'ut-p', childTenantId: 'ut-c' } }), 401, 'GH-20001');
  });

  test('two opposite assignments at once: one wins, the other is a 409, no cycle', async () => {
    await build({ 'cc-a': null, 'cc-b': null });
    const [x, y] = await Promise.all([
      t.call('POST', H, { token: vendor, body: { parentTenantId: 'cc-a', childTenantId: 'cc-b' } }),
      t.call('POST', H, { token: vendor, body: { parentTenantId: 'cc-b', childTenantId: 'cc-a' } }),
    ]);
    assert.deepEqual([x.status, y.status].sort(), [201, 409]);
    const a = await getAccount('cc-a');
    const b = await getAccount('cc-b');
    assert.ok((a.parentTenantId === null) !== (b.parentTenantId === null), 'exactly one has a parent');
  });
});

describe('reading the hierarchy', () => {
  // rd-root > {rd-b "beta", rd-a "Alpha", rd-z "alpha"} ; rd-a > rd-a1 > rd-a11 ; rd-b > rd-b1
  before(async () => {
    await build(
      {
        'rd-root': null,
        'rd-b': 'rd-root',
        'rd-a': 'rd-root',
        'rd-z': 'rd-root',
        'rd-a1': 'rd-a',
        'rd-a11': 'rd-a1',
        'rd-b1': 'rd-b',
      },
      {
        'rd-root': 'Root',
        'rd-b': 'beta',
        'rd-a': 'Alpha',
        'rd-z': 'alpha',
        'rd-a1': 'A one',
        'rd-a11': 'A one one',
        'rd-b1': 'B one',
      },
    );
  });

  test('sub-accounts: every level, ordered by level, name (case-insensitive), tenant id', async () => {
    const r = await t.call('GET', H, { token: vendor, headers: hdr('rd-root') });
    assert.equal(r.status, 200);
    assert.deepEqual(r.body, [
      { tenantId: 'rd-a', tenantName: 'Alpha', level: 1 },
      { tenantId: 'rd-z', tenantName: 'alpha', level: 1 },
      { tenantId: 'rd-b', tenantName: 'beta', level: 1 },
      { tenantId: 'rd-a1', tenantName: 'A one', level: 2 },
      { tenantId: 'rd-b1', tenantName: 'B one', level: 2 },
      { tenantId: 'rd-a11', tenantName: 'A one one', level: 3 },
    ]);
    assert.deepEqual(await subs('rd-a11'), []);
  });

  test('parents: nearest first with levels; a top-level account has none', async () => {
    const r = await t.call('GET', `${H}/parents`, { token: vendor, headers: hdr('rd-a11') });
    assert.equal(r.status, 200);
    assert.deepEqual(r.body, [
      { tenantId: 'rd-a1', tenantName: 'A one', level: 1 },
      { tenantId: 'rd-a', tenantName: 'Alpha', level: 2 },
      { tenantId: 'rd-root', tenantName: 'Root', level: 3 },
    ]);
    assert.deepEqual(await parents('rd-root'), []);
  });

  test('tree: the account with nested children, ordered by name', async () => {
    const r = await t.call('GET', `${H}/tree`, { token: vendor, headers: hdr('rd-root') });
    assert.equal(r.status, 200);
    const leaf = (tenantId: string, tenantName: string) => ({ tenantId, tenantName, children: [] });
    assert.deepEqual(r.body, {
      tenantId: 'rd-root',
      tenantName: 'Root',
      children: [
        {
          tenantId: 'rd-a',
          tenantName: 'Alpha',
          children: [{ tenantId: 'rd-a1', tenantName: 'A one', children: [leaf('rd-a11', 'A one one')] }],
        },
        leaf('rd-z', 'alpha'),
        { tenantId: 'rd-b', tenantName: 'beta', children: [leaf('rd-b1', 'B one')] },
      ],
    });
    assert.deepEqual(await tree('rd-b1'), leaf('rd-b1', 'B one'));
  });

  test('a user reads from their own account; the tenant header does not change it', async () => {
    const u = await user('rd-a', [READ]);
    const s = await t.call('GET', H, { token: u, headers: hdr('rd-root') });
    assert.equal(s.status, 200);
    assert.deepEqual(ids(s.body), ['rd-a1', 'rd-a11']);
    assert.deepEqual((await t.call('GET', `${H}/parents`, { token: u })).body, [
      { tenantId: 'rd-root', tenantName: 'Root', level: 1 },
    ]);
    assert.equal((await t.call('GET', `${H}/tree`, { token: u })).body.children[0].tenantId, 'rd-a1');
    const wildcard = await t.userToken({ tenantId: 'rd-a', permissions: ['fe.account-hierarchy.*'] });
    assert.equal((await t.call('GET', H, { token: wildcard })).status, 200);
  });

  test('a user without the read permission is 403 on every read', async () => {
    const u = await user('rd-a', [WRITE]);
    for (const path of [H, `${H}/parents`, `${H}/tree`, `${H}/parents/rd-a1`]) {
      fails(await t.call('GET', path, { token: u }), 403, 'GH-20004', /fe\.account-hierarchy\.read\.subaccount/);
    }
  });

  test('tenant header: missing is 400, unknown is 404, the frontegg alias works', async () => {
    for (const path of [H, `${H}/parents`, `${H}/tree`]) {
      fails(await t.call('GET', path, { token: vendor }), 400, 'GH-20006');
      fails(await t.call('GET', path, { token: vendor, headers: hdr('rd-nobody') }), 404, 'GH-30001', /rd-nobody/);
    }
    const r = await t.call('GET', H, { token: vendor, headers: { 'frontegg-tenant-id': 'rd-b' } });
    assert.deepEqual(ids(r.body), ['rd-b1']);
    fails(await t.call('GET', H, { token: await user('rd-nobody', [READ]) }), 404, 'GH-30001');
  });

  test('parents of a given account: vendor any; a user only their account or its subtree', async () => {
    const v = await t.call('GET', `${H}/parents/rd-b1`, { token: vendor });
    assert.equal(v.status, 200);
    assert.deepEqual(v.body, [
      { tenantId: 'rd-b', tenantName: 'beta', level: 1 },
      { tenantId: 'rd-root', tenantName: 'Root', level: 2 },
    ]);
    fails(await t.call('GET', `${H}/parents/rd-nobody`, { token: vendor }), 404, 'GH-30001');
    const u = await user('rd-a', [READ]);
    assert.deepEqual(ids((await t.call('GET', `${H}/parents/rd-a11`, { token: u })).body), [
      'rd-a1',
      'rd-a',
      'rd-root',
    ]);
    assert.deepEqual(ids((await t.call('GET', `${H}/parents/rd-a`, { token: u })).body), ['rd-root']);
    for (const other of ['rd-root', 'rd-b', 'rd-b1', 'rd-nobody']) {
      fails(await t.call('GET', `${H}/parents/${other}`, { token: u }), 403, 'GH-30005', new RegExp(other));
    }
  });

  test('the routes are in the OpenAPI document, the tree as a self-referencing schema', async () => {
    const r = await t.call('GET', '/openapi.json');
    for (const p of [
      H,
      `${H}/parents`,
      `${H}/tree`,
      SUB,
      `${SUB}/{tenantId}`,
      `${SUB}/{tenantId}/management`,
      `${SUB}/{tenantId}/hierarchy-settings`,
    ]) {
      assert.ok(r.body.paths[p], p);
    }
    const ref = r.body.paths[`${H}/tree`].get.responses['200'].content['application/json'].schema.$ref as string;
    const node = r.body.components.schemas[ref.split('/').pop()!];
    assert.equal(node.properties.children.items.$ref, ref);
  });
});

describe('sub-accounts', () => {
  test('vendor creates a sub-account with the optional fields', async () => {
    await account(t, { id: 'sc-p', name: 'Parent' });
    const body = {
      tenantId: 'sc-c',
      name: 'Child',
      parentTenantId: 'sc-p',
      status: 'trial',
      logoUrl: 'https://x.test/l.png',
      creatorName: 'Ann',
      creatorEmail: 'ann@x.test',
      isReseller: true,
    };
    const r = await t.call('POST', SUB, { token: vendor, body });
    assert.equal(r.status, 201);
    assert.equal(r.body.tenantId, 'sc-c');
    assert.equal(r.body.parentTenantId, 'sc-p');
    assert.equal(r.body.status, 'trial');
    assert.equal(r.body.logoUrl, 'https://x.test/l.png');
    assert.equal(r.body.creatorEmail, 'ann@x.test');
    assert.equal(r.body.isReseller, true);
    assert.equal(r.body.subAccountAccessType, 'defaultOff');
    assert.deepEqual(await subs('sc-p'), [{ tenantId: 'sc-c', tenantName: 'Child', level: 1 }]);
    fails(await t.call('POST', SUB, { token: vendor, body }), 409, 'GH-30002');
    fails(
      await t.call('POST', SUB, { token: vendor, body: { ...body, tenantId: 'sc-x', parentTenantId: 'sc-none' } }),
      404,
      'GH-30001',
      /parentTenantId sc-none/,
    );
  });

  test('bad bodies are 400 naming the field; nothing is created', async () => {
    await account(t, { id: 'sb-p' });
    fails(
      await t.call('POST', SUB, { token: vendor, body: { tenantId: 'sb-c', name: 'c' } }),
      400,
      'GH-10001',
      /body\.parentTenantId is required/,
    );
    fails(
      await t.call('POST', SUB, { token: vendor, body: { name: 'c', parentTenantId: 'sb-p' } }),
      400,
      'GH-10001',
      /body\.tenantId is required/,
    );
    fails(
      await t.call('POST', SUB, { token: vendor, body: { tenantId: 'sb-c', parentTenantId: 'sb-p' } }),
      400,
      'GH-10001',
      /body\.name is required/,
    );
    fails(
      await t.call('POST', SUB, { token: vendor, body: { tenantId: 'sb-c', name: '', parentTenantId: 'sb-p' } }),
      400,
      'GH-10001',
      /body\.name/,
    );
    fails(
      await t.call('POST', SUB, {
        token: vendor,
        body: { tenantId: 'sb-c', name: 'c', parentTenantId: 'sb-p', isReseller: 'true' },
      }),
      400,
      'GH-10001',
      /body\.isReseller must be boolean/,
    );
    fails(
      await t.call('POST', SUB, {
        token: vendor,
        body: { tenantId: 'sb-c', name: 'c', parentTenantId: 'sb-p', metadata: '[1]' },
      }),
      400,
      'GH-10001',
      /metadata must be a JSON object/,
    );
    fails(
      await t.call('POST', SUB, {
        token: vendor,
        body: { tenantId: 'sb-c', name: 'a\u0000b', parentTenantId: 'sb-p' },
      }),
      400,
      'GH-10001',
      /body\.name must not contain the NUL character/,
    );
    fails(
      await t.call('POST', SUB, {
        token: vendor,
        body: { tenantId: 'sb-c', name: 'c', parentTenantId: 'sb-p', metadata: '{"k":"\\u0000"}' },
      }),
      400,
      'GH-10001',
      /body\.metadata\.k must not contain NUL/,
    );
    fails(
      await t.call('POST', SUB, {
        token: vendor,
        body: { tenantId: 'sb-c', name: 'c', parentTenantId: 'sb-p', logo: '\ud800' },
      }),
      400,
      'GH-10001',
      /body\.logo .*unpaired surrogates/,
    );
    assert.deepEqual(await getAccount('sb-c'), []);
    assert.deepEqual(await subs('sb-p'), []);
  });

  test('a user creates under their account or its subtree only, with the write permission', async () => {
    await build({ 'su-root': null, 'su-me': 'su-root', 'su-kid': 'su-me', 'su-sib': 'su-root' });
    const u = await user('su-me');
    const a = await t.call('POST', SUB, { token: u, body: { tenantId: 'su-n1', name: 'N1', parentTenantId: 'su-me' } });
    assert.equal(a.status, 201);
    assert.equal(a.body.parentTenantId, 'su-me');
    const b = await t.call('POST', SUB, {
      token: u,
      body: { tenantId: 'su-n2', name: 'N2', parentTenantId: 'su-kid' },
    });
    assert.equal(b.status, 201);
    for (const parent of ['su-root', 'su-sib', 'su-nobody']) {
      fails(
        await t.call('POST', SUB, { token: u, body: { tenantId: 'su-n3', name: 'N3', parentTenantId: parent } }),
        403,
        'GH-30005',
        new RegExp(parent),
      );
    }
    fails(
      await t.call('POST', SUB, {
        token: await user('su-me', [READ]),
        body: { tenantId: 'su-n3', name: 'N3', parentTenantId: 'su-me' },
      }),
      403,
      'GH-20004',
    );
    assert.deepEqual(await getAccount('su-n3'), []);
    assert.deepEqual(ids(await subs('su-me')), ['su-n1', 'su-kid', 'su-n2'], 'N1 sorts before su-kid by name');
  });

  test('creating over a removed account reactivates it with nothing stale', async () => {
    await build({ 're-p1': null, 're-p2': null });
    await t.call('POST', SUB, {
      token: vendor,
      body: {
        tenantId: 're-x',
        name: 'Old',
        parentTenantId: 're-p1',
        logo: 'old-logo',
        isReseller: true,
        metadata: { plan: 'gold' },
      },
    });
    await t.call('PUT', `${SUB}/re-x/hierarchy-settings`, {
      token: vendor,
      body: { subAccountAccessType: 'alwaysOn' },
    });
    await t.call('POST', SUB, { token: vendor, body: { tenantId: 're-y', name: 'Y', parentTenantId: 're-x' } });
    assert.equal((await t.call('DELETE', `${SUB}/re-x`, { token: vendor })).status, 200);
    assert.equal((await getAccount('re-y')).parentTenantId, 're-p1', 'its sub-account moved up');

    const r = await t.call('POST', SUB, {
      token: vendor,
      body: { tenantId: 're-x', name: 'New', parentTenantId: 're-p2' },
    });
    assert.equal(r.status, 201);
    assert.equal(r.body.name, 'New');
    assert.equal(r.body.parentTenantId, 're-p2');
    assert.equal(r.body.metadata, '{}');
    assert.equal(r.body.logo, null);
    assert.equal(r.body.isReseller, false);
    assert.equal(r.body.subAccountAccessType, 'defaultOff');
    assert.equal(r.body.deletedAt, null);
    assert.deepEqual(await tree('re-x'), { tenantId: 're-x', tenantName: 'New', children: [] });
    assert.deepEqual(ids(await subs('re-p1')), ['re-y']);
    assert.deepEqual(ids(await parents('re-x')), ['re-p2']);
  });

  test('removing a middle account moves its sub-accounts to its parent', async () => {
    await build({ 'rm-r': null, 'rm-m': 'rm-r', 'rm-c1': 'rm-m', 'rm-c2': 'rm-m', 'rm-g': 'rm-c2' });
    const r = await t.call('DELETE', `${SUB}/rm-m`, { token: vendor });
    assert.equal(r.status, 200);
    assert.equal(r.body.tenantId, 'rm-m');
    assert.ok(r.body.deletedAt);
    assert.deepEqual(await getAccount('rm-m'), []);
    assert.deepEqual(await parents('rm-g'), [
      { tenantId: 'rm-c2', tenantName: 'rm-c2', level: 1 },
      { tenantId: 'rm-r', tenantName: 'rm-r', level: 2 },
    ]);
    assert.deepEqual(await tree('rm-r'), {
      tenantId: 'rm-r',
      tenantName: 'rm-r',
      children: [
        { tenantId: 'rm-c1', tenantName: 'rm-c1', children: [] },
        { tenantId: 'rm-c2', tenantName: 'rm-c2', children: [{ tenantId: 'rm-g', tenantName: 'rm-g', children: [] }] },
      ],
    });
    fails(await t.call('DELETE', `${SUB}/rm-m`, { token: vendor }), 404, 'GH-30001');
    fails(await t.call('DELETE', `${SUB}/rm-r`, { token: vendor }), 404, 'GH-30004', /not a sub-account/);
    assert.equal((await getAccount('rm-r')).tenantId, 'rm-r');
  });

  test('a user removes strict sub-accounts of their account only', async () => {
    await build({ 'ud-r': null, 'ud-me': 'ud-r', 'ud-kid': 'ud-me', 'ud-gk': 'ud-kid', 'ud-sib': 'ud-r' });
    const u = await user('ud-me');
    for (const id of ['ud-me', 'ud-r', 'ud-sib', 'ud-nobody'])
      fails(await t.call('DELETE', `${SUB}/${id}`, { token: u }), 403, 'GH-30005');
    fails(await t.call('DELETE', `${SUB}/ud-kid`, { token: await user('ud-me', [READ]) }), 403, 'GH-20004');
    const r = await t.call('DELETE', `${SUB}/ud-kid`, { token: u });
    assert.equal(r.status, 200);
    assert.equal(r.body.tenantId, 'ud-kid');
    assert.deepEqual(ids(await parents('ud-gk')), ['ud-me', 'ud-r']);
    assert.equal((await getAccount('ud-sib')).tenantId, 'ud-sib');
  });

  test('management: isReseller on any account (vendor) or a strict sub-account (user)', async () => {
    await build({ 'mg-r': null, 'mg-me': 'mg-r', 'mg-kid': 'mg-me' });
    const v = await t.call('PUT', `${SUB}/mg-me/management`, { token: vendor, body: { isReseller: true } });
    assert.equal(v.status, 200);
    assert.equal(v.body.isReseller, true);
    assert.equal((await getAccount('mg-me')).isReseller, true);
    const u = await user('mg-me');
    const k = await t.call('PUT', `${SUB}/mg-kid/management`, { token: u, body: { isReseller: true } });
    assert.equal(k.status, 200);
    assert.equal(k.body.isReseller, true);
    fails(await t.call('PUT', `${SUB}/mg-me/management`, { token: u, body: { isReseller: false } }), 403, 'GH-30005');
    fails(await t.call('PUT', `${SUB}/mg-r/management`, { token: u, body: { isReseller: true } }), 403, 'GH-30005');
    fails(
      await t.call('PUT', `${SUB}/mg-kid/management`, {
        token: await user('mg-me', [READ]),
        body: { isReseller: false },
      }),
      403,
      'GH-20004',
    );
    fails(
      await t.call('PUT', `${SUB}/mg-kid/management`, { token: vendor, body: { isReseller: 'false' } }),
      400,
      'GH-10001',
      /body\.isReseller must be boolean/,
    );
    fails(
      await t.call('PUT', `${SUB}/mg-kid/management`, { token: vendor, body: {} }),
      400,
      'GH-10001',
      /body\.isReseller is required/,
    );
    fails(
      await t.call('PUT', `${SUB}/mg-none/management`, { token: vendor, body: { isReseller: true } }),
      404,
      'GH-30001',
    );
    assert.equal((await getAccount('mg-kid')).isReseller, true);
    assert.equal((await getAccount('mg-r')).isReseller, false);
  });

  test('hierarchy-settings: a user sets it on their own account and its subtree', async () => {
    await build({ 'hs-r': null, 'hs-me': 'hs-r', 'hs-kid': 'hs-me' });
    const v = await t.call('PUT', `${SUB}/hs-r/hierarchy-settings`, {
      token: vendor,
      body: { subAccountAccessType: 'alwaysOn' },
    });
    assert.equal(v.status, 200);
    assert.equal(v.body.subAccountAccessType, 'alwaysOn');
    const u = await user('hs-me');
    const own = await t.call('PUT', `${SUB}/hs-me/hierarchy-settings`, {
      token: u,
      body: { subAccountAccessType: 'defaultOn' },
    });
    assert.equal(own.status, 200);
    assert.equal(own.body.subAccountAccessType, 'defaultOn');
    assert.equal(
      (
        await t.call('PUT', `${SUB}/hs-kid/hierarchy-settings`, {
          token: u,
          body: { subAccountAccessType: 'alwaysOn' },
        })
      ).body.subAccountAccessType,
      'alwaysOn',
    );
    fails(
      await t.call('PUT', `${SUB}/hs-r/hierarchy-settings`, { token: u, body: { subAccountAccessType: 'defaultOff' } }),
      403,
      'GH-30005',
    );
    fails(
      await t.call('PUT', `${SUB}/hs-me/hierarchy-settings`, {
        token: vendor,
        body: { subAccountAccessType: 'sometimes' },
      }),
      400,
      'GH-10001',
      /body\.subAccountAccessType/,
    );
    fails(
      await t.call('PUT', `${SUB}/hs-none/hierarchy-settings`, {
        token: vendor,
        body: { subAccountAccessType: 'defaultOn' },
      }),
      404,
      'GH-30001',
    );
    assert.equal((await getAccount('hs-r')).subAccountAccessType, 'alwaysOn');
    assert.equal((await getAccount('hs-me')).subAccountAccessType, 'defaultOn');
  });

  test('PATCH updates a sub-account (vendor any; a user a strict sub-account)', async () => {
    await build({ 'pa-r': null, 'pa-me': 'pa-r', 'pa-kid': 'pa-me' });
    const v = await t.call('PATCH', `${SUB}/pa-me`, {
      token: vendor,
      body: { name: 'Me', website: 'https://me.test', metadata: { a: 1 } },
    });
    assert.equal(v.status, 200);
    assert.equal(v.body.name, 'Me');
    assert.equal(v.body.website, 'https://me.test');
    assert.equal(v.body.metadata, '{"a":1}');
    assert.equal(v.body.parentTenantId, 'pa-r');
    const u = await user('pa-me');
    const k = await t.call('PATCH', `${SUB}/pa-kid`, { token: u, body: { status: 'suspended' } });
    assert.equal(k.status, 200);
    assert.equal(k.body.status, 'suspended');
    assert.equal(k.body.name, 'pa-kid');
    fails(await t.call('PATCH', `${SUB}/pa-me`, { token: u, body: { name: 'Mine' } }), 403, 'GH-30005');
    fails(
      await t.call('PATCH', `${SUB}/pa-kid`, { token: vendor, body: {} }),
      400,
      'GH-10001',
      /at least one account field/,
    );
    fails(
      await t.call('PATCH', `${SUB}/pa-kid`, { token: vendor, body: { name: 7 } }),
      400,
      'GH-10001',
      /body\.name must be string/,
    );
    fails(await t.call('PATCH', `${SUB}/pa-none`, { token: vendor, body: { name: 'x' } }), 404, 'GH-30001');
    fails(
      await t.call('PATCH', `${SUB}/pa-kid`, { token: vendor, body: { metadata: { ['k\u0000']: 1 } } }),
      400,
      'GH-10001',
      /body\.metadata must not contain the NUL character/,
    );
    fails(
      await t.call('PATCH', `${SUB}/pa%00kid`, { token: vendor, body: { name: 'x' } }),
      400,
      'GH-10001',
      /params\.tenantId must match pattern/,
    );
    assert.equal((await getAccount('pa-me')).name, 'Me');
  });
});

describe('depth limit', () => {
  test('a chain of 1000 levels is read whole; going deeper is 409 HIERARCHY_TOO_DEEP', async () => {
    await t.db.query(`INSERT INTO tenants (tenant_id, id, name, parent_tenant_id)
      SELECT 'deep-' || i, gen_random_uuid(), 'Deep ' || i, CASE WHEN i = 0 THEN NULL ELSE 'deep-' || (i - 1) END
      FROM generate_series(0, 1000) AS i ORDER BY i`);
    const up = await parents('deep-1000');
    assert.equal(up.length, 1000);
    assert.deepEqual(up[0], { tenantId: 'deep-999', tenantName: 'Deep 999', level: 1 });
    assert.deepEqual(up[999], { tenantId: 'deep-0', tenantName: 'Deep 0', level: 1000 });
    assert.equal((await subs('deep-0')).length, 1000);
    await account(t, { id: 'deep-extra' });
    fails(
      await t.call('POST', H, { token: vendor, body: { parentTenantId: 'deep-1000', childTenantId: 'deep-extra' } }),
      409,
      'GH-30101',
    );
    fails(
      await t.call('POST', SUB, {
        token: vendor,
        body: { tenantId: 'deep-more', name: 'm', parentTenantId: 'deep-1000' },
      }),
      409,
      'GH-30101',
    );
    fails(
      await t.call('POST', H, { token: vendor, body: { parentTenantId: 'deep-extra', childTenantId: 'deep-0' } }),
      409,
      'GH-30101',
    );
    assert.equal(
      (await t.call('POST', H, { token: vendor, body: { parentTenantId: 'deep-999', childTenantId: 'deep-extra' } }))
        .status,
      201,
    );
  });
});

describe('performance: 10,000 accounts, 20 levels', () => {
  // Level l (0-19) holds 500 accounts pf-l-k; pf-l-k is the parent of pf-(l+1)-(2k) and pf-(l+1)-(2k+1).
  before(async () => {
    await t.db.query(`INSERT INTO tenants (tenant_id, id, name, parent_tenant_id)
      SELECT 'pf-' || l || '-' || k, gen_random_uuid(), 'Perf ' || l || '-' || k, CASE WHEN l = 0 THEN NULL ELSE 'pf-' || (l - 1) || '-' || (k / 2) END
      FROM generate_series(0, 19) AS l, generate_series(0, 499) AS k ORDER BY l, k`);
  });

  test('the walks use the primary key and the parent index, never a scan of all accounts', async () => {
    for (const [sql, id] of [
      [ANCESTORS_SQL, 'pf-19-333'],
      [DESCENDANTS_SQL, 'pf-10-100'],
    ]) {
      const { rows } = await t.db.query<Record<string, string>>(
        `EXPLAIN ${sql.replace('$1', `'${id}'`).replace('$2', '1000')}`,
      );
      const plan = rows.map((r) => Object.values(r)[0]).join('\n');
      assert.doesNotMatch(plan, /Seq Scan on tenants/, plan);
      assert.match(plan, /Index (Only )?Scan using (tenants_live|tenants_pkey|tenants_parent)/, plan);
    }
  });

  test('parents of a leaf and the tree of a mid-level account in a deep hierarchy', async () => {
    const up = await parents('pf-19-333');
    assert.equal(up.length, 19);
    assert.deepEqual(
      up.slice(0, 2).map((e: { tenantId: string; level: number }) => [e.tenantId, e.level]),
      [
        ['pf-18-166', 1],
        ['pf-17-83', 2],
      ],
    );
    const node = await tree('pf-10-100');
    assert.deepEqual(
      node.children.map((c: { tenantId: string }) => c.tenantId),
      ['pf-11-200', 'pf-11-201'],
    );
    assert.equal((await subs('pf-10-100')).length, 6);
  });
});
