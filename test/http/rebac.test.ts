import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startTestApp, type TestApp } from '../helpers/harness.ts';
import { account } from '../fixtures/builders.ts';

const T = '/entitlements/resources/entity-types/v1';
const A = '/entitlements/resources/relations/v1';
const DAY = 86_400_000;
const at = (ms: number) => new Date(ms).toISOString();

describe('ReBAC: entity types, relations, actions, relation assignments and the check', () => {
  let t: TestApp;
  let token: string;
  const call = (method: string, url: string, body?: unknown) => t.call(method, url, { token, body });
  const asg = (o: Record<string, unknown> = {}) => ({
    subjectEntityTypeKey: 'user',
    subjectKey: 'u1',
    relationKey: 'viewer',
    targetEntityTypeKey: 'document',
    targetKey: 'd1',
    ...o,
  });
  const check = (o: Record<string, unknown> = {}) =>
    call('POST', `${A}/check`, {
      subjectEntityTypeKey: 'user',
      subjectKey: 'u1',
      action: 'read',
      targetEntityTypeKey: 'document',
      targetKey: 'd1',
      ...o,
    });
  const count = async () => (await call('GET', `${A}/assignments?limit=1000`)).body.items.length as number;

  before(async () => {
    t = await startTestApp();
    token = await t.vendorToken();
  });
  after(async () => t.close());

  test('vendor token only', async () => {
    assert.equal((await t.call('GET', T)).status, 401);
    assert.equal((await t.call('POST', `${A}/check`, { body: {} })).status, 401);
    await account(t, { id: 'acme' });
    const user = await t.userToken({ tenantId: 'acme' });
    assert.equal((await t.call('GET', T, { token: user })).status, 403);
    assert.equal((await t.call('POST', `${A}/assign`, { token: user, body: { assignments: [asg()] } })).status, 403);
  });

  test('entity types: create, read, page, update, rename, delete; bad keys 400; duplicate 409', async () => {
    for (const [key, description] of [
      ['user', 'people'],
      ['group', ''],
      ['document', 'docs'],
      ['tmp.type', 'x'],
    ]) {
      const r = await call('POST', T, { key, description });
      assert.equal(r.status, 201, JSON.stringify(r.body));
      assert.deepEqual(Object.keys(r.body).sort(), ['createdAt', 'description', 'key']);
      assert.equal(r.body.key, key);
    }
    assert.equal((await call('POST', T, { key: 'folder' })).body.description, '');
    const dup = await call('POST', T, { key: 'user' });
    assert.equal(dup.status, 409);
    assert.equal(dup.body.errorCode, 'GH-50013');
    for (const key of ['', 'has space', 'a/b', 'a..b', '.a', 5, 'x'.repeat(256)])
      assert.equal((await call('POST', T, { key })).status, 400, `key ${JSON.stringify(key)}`);
    assert.equal((await call('POST', T, { description: 'no key' })).status, 400);
    const p1 = await call('GET', `${T}?limit=2`);
    assert.equal(p1.status, 200);
    assert.deepEqual(
      p1.body.items.map((i: { key: string }) => i.key),
      ['user', 'group'],
    );
    assert.equal(p1.body.hasNext, true);
    const p3 = await call('GET', `${T}?offset=4&limit=2`);
    assert.deepEqual(
      p3.body.items.map((i: { key: string }) => i.key),
      ['folder'],
    );
    assert.equal(p3.body.hasNext, false);
    assert.equal((await call('GET', `${T}?limit=0`)).status, 400);
    assert.equal((await call('GET', `${T}?offset=-1`)).status, 400);
    const up = await call('PATCH', `${T}/tmp.type`, { key: 'tmp.renamed', description: 'y' });
    assert.equal(up.status, 200);
    assert.deepEqual([up.body.key, up.body.description], ['tmp.renamed', 'y']);
    assert.equal((await call('GET', `${T}/tmp.type`)).status, 404);
    assert.equal((await call('PATCH', `${T}/tmp.renamed`, { key: 'user' })).status, 409);
    assert.equal((await call('PATCH', `${T}/tmp.renamed`, { description: 'no key' })).status, 400);
    assert.equal((await call('PATCH', `${T}/nope`, { key: 'nope' })).status, 404);
    assert.equal((await call('DELETE', `${T}/tmp.renamed`)).status, 204);
    const gone = await call('DELETE', `${T}/tmp.renamed`);
    assert.equal(gone.status, 404);
    assert.equal(gone.body.errorCode, 'GH-50012');
  });

  test('relations and actions: create (all or none), read through the type, update, rename, delete; bad input 400; 409s', async () => {
    const rels = await call('POST', `${T}/document/relations`, {
      relations: [
        { key: 'viewer', subjectEntityKeys: ['user', 'group'] },
        { key: 'owner', subjectEntityKeys: ['user'] },
        { key: 'editor', subjectEntityKeys: ['user'] },
      ],
    });
    assert.equal(rels.status, 201, JSON.stringify(rels.body));
    assert.deepEqual(rels.body[0], {
      vendorId: rels.body[0].vendorId,
      targetEntityTypeKey: 'document',
      key: 'viewer',
      subjectEntityTypeKeys: ['user', 'group'],
    });
    assert.ok(rels.body[0].vendorId);
    assert.equal(
      (await call('POST', `${T}/document/relations`, { relations: [{ key: 'viewer', subjectEntityKeys: ['user'] }] }))
        .status,
      409,
    );
    const unknownSubject = await call('POST', `${T}/document/relations`, {
      relations: [
        { key: 'reader', subjectEntityKeys: ['user'] },
        { key: 'x', subjectEntityKeys: ['user', 'robot'] },
      ],
    });
    assert.equal(unknownSubject.status, 400);
    assert.match(unknownSubject.body.errors[0], /relations\[1\]\.subjectEntityKeys\[1\].*robot/);
    assert.equal(
      (
        await call('POST', `${T}/document/relations`, {
          relations: [
            { key: 'a', subjectEntityKeys: ['user'] },
            { key: 'a', subjectEntityKeys: ['user'] },
          ],
        })
      ).status,
      400,
    );
    assert.equal(
      (await call('POST', `${T}/document/relations`, { relations: [{ key: 'a', subjectEntityKeys: [] }] })).status,
      400,
    );
    assert.equal((await call('POST', `${T}/document/relations`, { relations: [] })).status, 400);
    assert.equal(
      (await call('POST', `${T}/nope/relations`, { relations: [{ key: 'a', subjectEntityKeys: ['user'] }] })).status,
      404,
    );
    assert.deepEqual(
      (await call('GET', `${T}/document`)).body.relations,
      ['viewer', 'owner', 'editor'],
      'the refused batch created nothing',
    );

    const acts = await call('POST', `${T}/document/actions`, {
      actions: [
        { key: 'read', relationKeys: ['viewer', 'owner'] },
        { key: 'delete', relationKeys: ['owner'] },
        { key: 'share', relationKeys: [] },
      ],
    });
    assert.equal(acts.status, 201, JSON.stringify(acts.body));
    assert.deepEqual(acts.body[0], {
      vendorId: acts.body[0].vendorId,
      entityTypeKey: 'document',
      key: 'read',
      relationKeys: ['viewer', 'owner'],
    });
    const badRel = await call('POST', `${T}/document/actions`, {
      actions: [{ key: 'write', relationKeys: ['editor', 'author'] }],
    });
    assert.equal(badRel.status, 400);
    assert.match(badRel.body.errors[0], /actions\[0\]\.relationKeys.*author/);
    assert.equal(
      (await call('POST', `${T}/document/actions`, { actions: [{ key: 'read', relationKeys: [] }] })).status,
      409,
    );
    assert.equal(
      (
        await call('POST', `${T}/document/actions`, {
          actions: [
            { key: 'b', relationKeys: [] },
            { key: 'b', relationKeys: [] },
          ],
        })
      ).status,
      400,
    );
    assert.equal((await call('POST', `${T}/document/actions`, { actions: [{ key: 'b' }] })).status, 400);
    const one = await call('GET', `${T}/document`);
    assert.deepEqual(
      [one.body.key, one.body.description, one.body.actions, one.body.relations],
      ['document', 'docs', ['read', 'delete', 'share'], ['viewer', 'owner', 'editor']],
    );

    const ua = await call('PATCH', `${T}/document/actions/share`, { key: 'share', relationKeys: ['owner', 'editor'] });
    assert.equal(ua.status, 200);
    assert.deepEqual(ua.body.relationKeys, ['owner', 'editor']);
    assert.equal(
      (await call('PATCH', `${T}/document/actions/share`, { key: 'share', relationKeys: ['ghost'] })).status,
      400,
    );
    assert.equal((await call('PATCH', `${T}/document/actions/share`, { key: 'read', relationKeys: [] })).status, 409);
    assert.equal((await call('PATCH', `${T}/document/actions/nope`, { key: 'nope', relationKeys: [] })).status, 404);
    // renaming a relation rewrites the actions that list it
    const ur = await call('PATCH', `${T}/document/relations/editor`, {
      key: 'writer',
      subjectEntityKeys: ['user', 'group', 'group'],
    });
    assert.equal(ur.status, 200);
    assert.deepEqual(ur.body.subjectEntityTypeKeys, ['user', 'group']);
    assert.equal(
      (await call('PATCH', `${T}/document/relations/writer`, { key: 'owner', subjectEntityKeys: ['user'] })).status,
      409,
    );
    assert.equal(
      (await call('PATCH', `${T}/document/relations/writer`, { key: 'writer', subjectEntityKeys: ['robot'] })).status,
      400,
    );
    assert.equal(
      (await call('PATCH', `${T}/document/relations/nope`, { key: 'nope', subjectEntityKeys: ['user'] })).status,
      404,
    );
    const listed = await call('PATCH', `${T}/document/actions/share`, {
      key: 'share',
      relationKeys: ['owner', 'writer'],
    });
    assert.equal(listed.status, 200, 'writer exists after the rename');
    // a relation listed by an action cannot go; an action can
    const busy = await call('DELETE', `${T}/document/relations/writer`);
    assert.equal(busy.status, 409);
    assert.equal(busy.body.errorCode, 'GH-50018');
    assert.match(busy.body.errors[0], /share/);
    assert.equal((await call('DELETE', `${T}/document/actions/share`)).status, 204);
    assert.equal((await call('DELETE', `${T}/document/actions/share`)).status, 404);
    assert.equal((await call('DELETE', `${T}/document/relations/writer`)).status, 204);
    assert.equal((await call('DELETE', `${T}/document/relations/writer`)).status, 404);
  });

  test('assign: all or nothing, idempotent, every bad input 400 naming the index; unassign', async () => {
    const now = Date.now();
    const r = await call('POST', `${A}/assign`, {
      assignments: [
        asg(),
        asg({ subjectKey: 'u2', relationKey: 'owner', activeFrom: at(now - DAY), activeUntil: at(now + DAY) }),
      ],
    });
    assert.equal(r.status, 201, JSON.stringify(r.body));
    assert.deepEqual(r.body[0], asg());
    assert.equal(r.body[1].activeFrom, at(now - DAY));
    const n = await count();
    assert.equal(n, 2);
    assert.equal(
      (await call('POST', `${A}/assign`, { assignments: [asg(), asg()] })).status,
      201,
      'identical again: no change',
    );
    assert.equal(await count(), 2);
    const cases: [Record<string, unknown>, RegExp][] = [
      [asg({ targetEntityTypeKey: 'robot' }), /assignments\[1\]\.targetEntityTypeKey.*robot/],
      [asg({ relationKey: 'author' }), /assignments\[1\]\.relationKey.*author/],
      [asg({ subjectEntityTypeKey: 'robot' }), /assignments\[1\]\.subjectEntityTypeKey.*robot/],
      [
        asg({ subjectEntityTypeKey: 'group', relationKey: 'owner' }),
        /assignments\[1\]\.subjectEntityTypeKey.*group may not hold/,
      ],
      [asg({ activeFrom: at(now), activeUntil: at(now) }), /assignments\[1\]\.activeUntil/],
      [asg({ activeFrom: at(now), activeUntil: at(now - 1) }), /assignments\[1\]\.activeUntil/],
    ];
    for (const [bad, rule] of cases) {
      const res = await call('POST', `${A}/assign`, { assignments: [asg({ subjectKey: 'u9' }), bad] });
      assert.equal(res.status, 400, JSON.stringify(bad));
      assert.match(res.body.errors[0], rule);
    }
    assert.equal(
      (
        await call('POST', `${A}/assign`, {
          assignments: [asg({ subjectKey: 'u9' }), asg({ subjectKey: 'u9', activeUntil: at(now + DAY) })],
        })
      ).status,
      400,
      'same keys, two windows',
    );
    for (const bad of [
      asg({ subjectKey: 'has space' }),
      asg({ activeFrom: 'tomorrow' }),
      { ...asg(), targetKey: undefined },
      asg({ relationKey: 5 }),
    ]) {
      assert.equal((await call('POST', `${A}/assign`, { assignments: [bad] })).status, 400, JSON.stringify(bad));
    }
    assert.equal((await call('POST', `${A}/assign`, { assignments: [] })).status, 400);
    assert.equal((await call('POST', `${A}/assign`, {})).status, 400);
    assert.equal(await count(), 2, 'nothing of a refused batch stays (u9 never assigned)');

    assert.equal(
      (
        await call('POST', `${A}/unassign`, {
          assignments: [asg({ subjectKey: 'u2', relationKey: 'owner' }), asg({ subjectKey: 'never' })],
        })
      ).status,
      204,
    );
    assert.equal(await count(), 1);
    assert.equal(
      (await call('POST', `${A}/unassign`, { assignments: [asg({ activeFrom: at(now), activeUntil: at(now) })] }))
        .status,
      400,
    );
    assert.equal(await count(), 1);
  });

  test('assignments list: pages in creation order, filters', async () => {
    await call('POST', `${A}/assign`, {
      assignments: [1, 2, 3, 4].map((i) => asg({ subjectKey: `p${i}`, targetKey: 'paged' })),
    });
    const p = await call('GET', `${A}/assignments?targetKey=paged&limit=3`);
    assert.equal(p.status, 200);
    assert.deepEqual(
      p.body.items.map((a: { subjectKey: string }) => a.subjectKey),
      ['p1', 'p2', 'p3'],
    );
    assert.equal(p.body.hasNext, true);
    const q = await call('GET', `${A}/assignments?targetKey=paged&limit=3&offset=3`);
    assert.deepEqual(
      q.body.items.map((a: { subjectKey: string }) => a.subjectKey),
      ['p4'],
    );
    assert.equal(q.body.hasNext, false);
    assert.equal((await call('GET', `${A}/assignments?subjectKey=p2`)).body.items.length, 1);
    assert.equal((await call('GET', `${A}/assignments?limit=1001`)).status, 400);
    await call('POST', `${A}/unassign`, {
      assignments: [1, 2, 3, 4].map((i) => asg({ subjectKey: `p${i}`, targetKey: 'paged' })),
    });
  });

  test('check: true through a granting relation; false when missing, not granting, expired or not yet active', async () => {
    const now = Date.now();
    assert.deepEqual((await check()).body, { result: true, relationKey: 'viewer' });
    assert.deepEqual(
      (await check({ action: 'delete' })).body,
      { result: false, justification: 'MISSING_RELATION' },
      'viewer does not grant delete',
    );
    assert.deepEqual((await check({ action: 'fly' })).body, { result: false, justification: 'MISSING_ACTION' });
    assert.deepEqual((await check({ targetEntityTypeKey: 'folder' })).body, {
      result: false,
      justification: 'MISSING_ACTION',
    });
    assert.deepEqual((await check({ targetKey: 'd2' })).body, { result: false, justification: 'MISSING_RELATION' });
    assert.deepEqual((await check({ subjectEntityTypeKey: 'group' })).body, {
      result: false,
      justification: 'MISSING_RELATION',
    });
    await call('POST', `${A}/assign`, {
      assignments: [
        asg({ subjectKey: 'old', relationKey: 'owner', activeFrom: at(now - 2 * DAY), activeUntil: at(now - DAY) }),
        asg({ subjectKey: 'later', activeFrom: at(now + DAY) }),
        asg({ subjectKey: 'now', relationKey: 'owner', activeUntil: at(now + DAY) }),
      ],
    });
    assert.deepEqual((await check({ subjectKey: 'old', action: 'delete' })).body, {
      result: false,
      justification: 'RELATION_NOT_ACTIVE',
    });
    assert.deepEqual(
      (await check({ subjectKey: 'old', action: 'delete', at: at(now - 2 * DAY) })).body,
      { result: true, relationKey: 'owner' },
      'activeFrom inclusive',
    );
    assert.deepEqual(
      (await check({ subjectKey: 'old', action: 'delete', at: at(now - DAY) })).body.result,
      false,
      'activeUntil exclusive',
    );
    assert.deepEqual((await check({ subjectKey: 'later' })).body, {
      result: false,
      justification: 'RELATION_NOT_ACTIVE',
    });
    assert.deepEqual((await check({ subjectKey: 'now', action: 'delete' })).body, {
      result: true,
      relationKey: 'owner',
    });
    // re-assigning the same keys with a new window replaces the window
    assert.equal(
      (await call('POST', `${A}/assign`, { assignments: [asg({ subjectKey: 'old', relationKey: 'owner' })] })).status,
      201,
    );
    assert.equal((await check({ subjectKey: 'old', action: 'delete' })).body.result, true);
    // unassign revokes
    await call('POST', `${A}/unassign`, { assignments: [asg()] });
    assert.deepEqual((await check()).body, { result: false, justification: 'MISSING_RELATION' });
    for (const bad of [{ action: undefined }, { subjectKey: '' }, { at: 'soon' }, { targetEntityTypeKey: 'a b' }]) {
      assert.equal((await check(bad)).status, 400, JSON.stringify(bad));
    }
  });

  test('deletes refused while referenced (409); renames carry assignments along', async () => {
    await call('POST', `${A}/assign`, { assignments: [asg({ subjectEntityTypeKey: 'group', subjectKey: 'g1' })] });
    const typeBusy = await call('DELETE', `${T}/group`);
    assert.equal(typeBusy.status, 409);
    assert.match(typeBusy.body.errors[0], /document\.viewer/);
    assert.equal((await call('DELETE', `${T}/document`)).status, 409, 'assignments target it');
    assert.equal(
      (await call('PATCH', `${T}/document/relations/viewer`, { key: 'viewer', subjectEntityKeys: ['user'] })).status,
      409,
      'group still holds viewer',
    );
    const relBusy = await call('DELETE', `${T}/document/relations/owner`);
    assert.equal(relBusy.status, 409);
    // rename the subject type and the relation: the assignment and the check follow
    assert.equal((await call('PATCH', `${T}/group`, { key: 'team' })).status, 200);
    assert.equal(
      (await call('PATCH', `${T}/document/relations/viewer`, { key: 'reader', subjectEntityKeys: ['user', 'team'] }))
        .status,
      200,
    );
    assert.deepEqual((await check({ subjectEntityTypeKey: 'team', subjectKey: 'g1' })).body, {
      result: true,
      relationKey: 'reader',
    });
    assert.deepEqual(
      (await call('GET', `${A}/assignments?subjectKey=g1`)).body.items[0],
      asg({ subjectEntityTypeKey: 'team', subjectKey: 'g1', relationKey: 'reader' }),
    );
    // once nothing references them, they go; a type's own relations and actions go with it
    const all = (await call('GET', `${A}/assignments?limit=1000`)).body.items;
    assert.equal((await call('POST', `${A}/unassign`, { assignments: all })).status, 204);
    assert.equal((await call('DELETE', `${T}/team`)).status, 409, 'document.reader still lists team');
    assert.equal(
      (await call('PATCH', `${T}/document/relations/reader`, { key: 'reader', subjectEntityKeys: ['user'] })).status,
      200,
    );
    assert.equal((await call('DELETE', `${T}/team`)).status, 204);
    assert.equal((await call('DELETE', `${T}/document`)).status, 204);
    assert.equal((await call('GET', `${T}/document`)).status, 404);
    assert.equal((await call('POST', T, { key: 'document' })).status, 201);
    assert.deepEqual((await call('GET', `${T}/document`)).body.relations, [], 'relations went with the type');
  });
});
