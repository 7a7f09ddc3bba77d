import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startTestApp, type TestApp } from '../helpers/harness.ts';
import { account } from '../fixtures/builders.ts';

/**
 * Switching syncToUserManagement on for a directory that already holds users: a durable job (src/jobs/runner.ts)
 * puts them into user management in chunks, its progress is the connection's `syncStatus`, and a crash mid-job
 * resumes on another server without doing anyone twice.
 */

const C = '/directory/resources/v1/configurations/scim2';
const S = '/directory/resources/scim/v2.0';
const USER = 'urn:ietf:params:scim:schemas:core:2.0:User';
const hdr = (tenantId: string) => ({ 'gatehouse-tenant-id': tenantId });

async function setUp(app: TestApp, tenantId: string, n: number, withoutEmail = 0) {
  const vendor = await app.vendorToken();
  await account(app, { id: tenantId });
  const conn = (
    await app.call('POST', C, {
      token: vendor,
      headers: hdr(tenantId),
      body: { source: 'okta', syncToUserManagement: false },
    })
  ).body as { id: string; token: string };
  const post = (body: unknown) =>
    app.call('POST', `${S}/${conn.id}/Users`, {
      token: conn.token,
      body,
      headers: { 'content-type': 'application/scim+json' },
    });
  for (let i = 0; i < n; i++) {
    const r = await post({
      schemas: [USER],
      userName: `${tenantId}-${i}@sync.test`,
      name: { givenName: 'Sync', familyName: `N${i}` },
      active: i % 10 !== 3,
    });
    assert.equal(r.status, 201, JSON.stringify(r.body));
  }
  for (let i = 0; i < withoutEmail; i++)
    assert.equal((await post({ schemas: [USER], userName: `${tenantId}-handle-${i}` })).status, 201);
  return { vendor, conn };
}

async function syncStatus(app: TestApp, tenantId: string, id: string) {
  const r = await app.call('GET', `${C}/${id}`, { token: await app.vendorToken(), headers: hdr(tenantId) });
  assert.equal(r.status, 200, JSON.stringify(r.body));
  return r.body.syncStatus as { state: string; processed: number; requestedAt?: string; completedAt?: string | null };
}

async function waitSync(
  app: TestApp,
  tenantId: string,
  id: string,
  until: (s: { state: string; processed: number }) => boolean,
  ms = 60_000,
) {
  const deadline = Date.now() + ms;
  for (;;) {
    const s = await syncStatus(app, tenantId, id);
    if (until(s)) return s;
    if (Date.now() > deadline) throw new Error(`sync of ${id}: ${JSON.stringify(s)}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

const countsOf = async (app: TestApp, tenantId: string, connId: string) => {
  const { rows } = await app.db.query<{ linked: number; members: number; users: number; distinct_users: number }>(
    `SELECT (SELECT count(*)::int FROM scim_users WHERE connection_id = $2 AND user_id IS NOT NULL) AS linked,
            (SELECT count(*)::int FROM user_tenants WHERE tenant_id = $1) AS members,
            (SELECT count(*)::int FROM users WHERE email LIKE $1 || '-%@sync.test') AS users,
            (SELECT count(DISTINCT user_id)::int FROM scim_users WHERE connection_id = $2) AS distinct_users`,
    [tenantId, connId],
  );
  return rows[0];
};

describe('switching syncToUserManagement on for a large directory', () => {
  let t: TestApp;
  before(async () => {
    t = await startTestApp({ JOB_CHUNK_SIZE: '40' });
  });
  after(async () => t?.close());

  test('a job puts every directory user with an email into user management; the connection shows its progress', async () => {
    const { vendor, conn } = await setUp(t, 'sync-big', 300, 4);
    assert.deepEqual(await syncStatus(t, 'sync-big', conn.id), { state: 'idle', processed: 0 });
    const users = () =>
      t.call('GET', '/identity/resources/users/v2?_limit=1', { token: vendor, headers: hdr('sync-big') });
    assert.equal((await users()).body._metadata.totalItems, 0);

    const on = await t.call('PATCH', `${C}/${conn.id}`, {
      token: vendor,
      headers: hdr('sync-big'),
      body: { syncToUserManagement: true },
    });
    assert.equal(on.status, 204);
    const started = await syncStatus(t, 'sync-big', conn.id);
    assert.ok(['pending', 'running', 'completed'].includes(started.state), JSON.stringify(started));
    assert.ok(started.requestedAt);

    const done = await waitSync(t, 'sync-big', conn.id, (s) => s.state === 'completed' || s.state === 'failed');
    assert.equal(done.state, 'completed');
    assert.equal(done.processed, 300);
    assert.ok(done.completedAt);
    assert.equal((await users()).body._metadata.totalItems, 300);
    // Every one of them, as the directory has them: managed by SCIM, enabled unless the directory says inactive.
    for (const i of [0, 3, 150, 299]) {
      const r = await t.call(
        'GET',
        `/identity/resources/users/v2?_email=${encodeURIComponent(`sync-big-${i}@sync.test`)}`,
        { token: vendor, headers: hdr('sync-big') },
      );
      const u = r.body.items[0];
      assert.ok(u, `user ${i}`);
      assert.equal(u.managedBy, 'scim2');
      assert.equal(u.name, `Sync N${i}`);
      const m = await t.db.query<{ is_disabled: boolean }>(
        'SELECT is_disabled FROM user_tenants WHERE tenant_id = $1 AND user_id = $2',
        ['sync-big', u.id],
      );
      assert.equal(m.rows[0].is_disabled, i % 10 === 3, `membership of ${i} follows active`);
    }
    assert.deepEqual(await countsOf(t, 'sync-big', conn.id), {
      linked: 300,
      members: 300,
      users: 300,
      distinct_users: 300,
    });
    // The users without an email stay in the directory only.
    const handles = await t.db.query<{ n: number }>(
      'SELECT count(*)::int AS n FROM scim_users WHERE connection_id = $1 AND user_id IS NULL',
      [conn.id],
    );
    assert.equal(handles.rows[0].n, 4);

    // Off and on again: a new job, which finds nothing left to do.
    for (const v of [false, true])
      assert.equal(
        (
          await t.call('PATCH', `${C}/${conn.id}`, {
            token: vendor,
            headers: hdr('sync-big'),
            body: { syncToUserManagement: v },
          })
        ).status,
        204,
      );
    const again = await waitSync(t, 'sync-big', conn.id, (s) => s.state === 'completed' && s.processed === 0);
    assert.equal(again.processed, 0);
    assert.deepEqual(await countsOf(t, 'sync-big', conn.id), {
      linked: 300,
      members: 300,
      users: 300,
      distinct_users: 300,
    });
  });

  test('a PATCH that does not switch sync on starts no job', async () => {
    const { vendor, conn } = await setUp(t, 'sync-none', 2);
    assert.equal(
      (
        await t.call('PATCH', `${C}/${conn.id}`, {
          token: vendor,
          headers: hdr('sync-none'),
          body: { metadata: { a: 1 } },
        })
      ).status,
      204,
    );
    assert.deepEqual(await syncStatus(t, 'sync-none', conn.id), { state: 'idle', processed: 0 });
    const list = await t.call('GET', `${C}?tenantId=sync-none`, { token: vendor });
    assert.deepEqual(list.body[0].syncStatus, { state: 'idle', processed: 0 });
  });
});

describe('the sync job survives a crash', () => {
  test('a crash mid-job resumes on another server: every directory user exactly once', async () => {
    const env = { JOB_CHUNK_SIZE: '5', JOB_LEASE_MS: '300' };
    const first = await startTestApp(env);
    let second: TestApp | undefined;
    try {
      const { vendor, conn } = await setUp(first, 'sync-crash', 300);
      assert.equal(
        (
          await first.call('PATCH', `${C}/${conn.id}`, {
            token: vendor,
            headers: hdr('sync-crash'),
            body: { syncToUserManagement: true },
          })
        ).status,
        204,
      );
      await waitSync(first, 'sync-crash', conn.id, (s) => s.state === 'running' && s.processed >= 20);
      await first.ctx.jobs.crash();
      const partial = await syncStatus(first, 'sync-crash', conn.id);
      assert.equal(
        partial.state,
        'running',
        'a crashed worker keeps its lease: the job looks running until another takes it',
      );
      assert.ok(partial.processed < 300, 'the crash came mid-job');
      const mid = await countsOf(first, 'sync-crash', conn.id);
      assert.equal(mid.linked, partial.processed, 'progress commits with the users it counts');

      second = await startTestApp(env, { db: first.db });
      const done = await waitSync(
        second,
        'sync-crash',
        conn.id,
        (s) => s.state === 'completed' || s.state === 'failed',
      );
      assert.equal(done.state, 'completed');
      assert.equal(done.processed, 300);
      assert.deepEqual(await countsOf(second, 'sync-crash', conn.id), {
        linked: 300,
        members: 300,
        users: 300,
        distinct_users: 300,
      });
      const job = (
        await second.db.query<{ state: string; attempts: number }>(
          `SELECT state, attempts FROM jobs WHERE kind = 'scim.sync-users' AND tenant_id = 'sync-crash'`,
        )
      ).rows;
      assert.deepEqual(job, [{ state: 'completed', attempts: 2 }]);
    } finally {
      await second?.close();
      await first.close();
    }
  });
});

describe('two servers: one process caches a connection it authenticated, another changes it', () => {
  let a: TestApp;
  let b: TestApp;
  before(async () => {
    a = await startTestApp();
    b = await startTestApp({}, { db: a.db, jobs: false });
  });
  after(async () => {
    await b?.close();
    await a?.close();
  });
  const scimOn =
    (app: TestApp, conn: { id: string }, token: string) => (method: string, path: string, body?: unknown) =>
      app.call(method, `${S}/${conn.id}${path}`, {
        token,
        body,
        headers: body === undefined ? {} : { 'content-type': 'application/scim+json' },
      });

  test('a token rotated elsewhere: writes with the old token are refused at once, the new token works at once', async () => {
    const { vendor, conn } = await setUp(a, 'two-rotate', 1);
    const oldB = scimOn(b, conn, conn.token);
    assert.equal((await oldB('GET', '/Users')).status, 200); // b now holds the connection in its auth cache
    const rotated = await a.call('POST', `${C}/${conn.id}/token`, { token: vendor, headers: hdr('two-rotate') });
    assert.equal(rotated.status, 200);
    const w = await oldB('POST', '/Users', { schemas: [USER], userName: 'late@sync.test' });
    assert.equal(w.status, 401);
    assert.equal(w.body.status, '401');
    assert.equal((await oldB('GET', '/Users')).status, 401, 'a refused write also drops the cached row');
    const newB = scimOn(b, conn, rotated.body.token);
    assert.equal((await newB('GET', '/Users')).status, 200);
    assert.equal((await newB('POST', '/Users', { schemas: [USER], userName: 'late@sync.test' })).status, 201);
    const { rows } = await a.db.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM scim_users WHERE connection_id = $1 AND user_name = 'late@sync.test'`,
      [conn.id],
    );
    assert.equal(rows[0].n, 1);
  });

  test('settings changed elsewhere: a create acts on the current ones, not on the cached ones', async () => {
    const { vendor, conn } = await setUp(a, 'two-settings', 1);
    const onB = scimOn(b, conn, conn.token);
    assert.equal((await onB('GET', '/Users')).status, 200); // cached with sync off
    assert.equal(
      (
        await a.call('PATCH', `${C}/${conn.id}`, {
          token: vendor,
          headers: hdr('two-settings'),
          body: { syncToUserManagement: true },
        })
      ).status,
      204,
    );
    const r = await onB('POST', '/Users', { schemas: [USER], userName: 'fresh@sync.test' });
    assert.equal(r.status, 201, JSON.stringify(r.body));
    const u = await a.call('GET', `/identity/resources/users/v2?_email=${encodeURIComponent('fresh@sync.test')}`, {
      token: vendor,
      headers: hdr('two-settings'),
    });
    assert.equal(u.body.items.length, 1, 'made in user management by the create itself');
    // With sync on (now cached so by b), a user without an email is refused; switched off elsewhere, it is taken.
    assert.equal((await onB('POST', '/Users', { schemas: [USER], userName: 'handle-1' })).status, 400);
    assert.equal(
      (
        await a.call('PATCH', `${C}/${conn.id}`, {
          token: vendor,
          headers: hdr('two-settings'),
          body: { syncToUserManagement: false },
        })
      ).status,
      204,
    );
    assert.equal((await onB('POST', '/Users', { schemas: [USER], userName: 'handle-1' })).status, 201);
  });

  test('a connection deleted elsewhere: writes are refused at once', async () => {
    const { vendor, conn } = await setUp(a, 'two-delete', 1);
    const onB = scimOn(b, conn, conn.token);
    const list = await onB('GET', '/Users');
    assert.equal(list.status, 200);
    const id = list.body.Resources[0].id;
    assert.equal(
      (await a.call('DELETE', `${C}/${conn.id}`, { token: vendor, headers: hdr('two-delete') })).status,
      204,
    );
    assert.equal((await onB('POST', '/Users', { schemas: [USER], userName: 'ghost@sync.test' })).status, 401);
    assert.equal(
      (
        await scimOn(b, conn, conn.token)('PATCH', `/Users/${id}`, {
          schemas: ['urn:ietf:params:scim:api:messages:2.0:PatchOp'],
          Operations: [{ op: 'replace', path: 'active', value: false }],
        })
      ).status,
      401,
    );
  });
});
