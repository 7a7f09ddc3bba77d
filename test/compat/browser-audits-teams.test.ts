import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { PASSWORD, rejectsWith, startBrowserSdk } from '../helpers/sdk.ts';

// The admin portal's audit log, temporary users, group configuration, user counts and breached-password resets,
// through the browser SDK signed in as an account's administrator.
let s: Awaited<ReturnType<typeof startBrowserSdk>>;
let env: string;
const id: Record<string, string> = {};
const U = '/identity/resources/users';

async function vendorCall(method: string, url: string, body: unknown, tenantId?: string, status = 201) {
  const headers = tenantId ? { 'gatehouse-tenant-id': tenantId } : undefined;
  const r = await s.t.call(method, url, { token: s.vendor, body, headers });
  assert.equal(r.status, status, `${method} ${url}: ${JSON.stringify(r.body)}`);
  return r.body;
}

/** The membership of a user in an account, as the vendor reads it. */
async function membership(userId: string, tenantId: string) {
  const user = await vendorCall('GET', `${U}/v1/${userId}`, undefined, tenantId, 200);
  const tenants = user.tenants as Array<{ tenantId: string; temporaryExpirationDate?: string }>;
  return tenants.find((m) => m.tenantId === tenantId);
}

/** Runs `fn` signed in as `email`, then signs the admin back in. */
async function as(email: string, fn: () => Promise<void>) {
  await s.signIn(email);
  try {
    await fn();
  } finally {
    await s.signIn('admin@at.test');
  }
}

before(async () => {
  s = await startBrowserSdk();
  env = s.t.ctx.environment.id;
  await s.account('at-acme', 'Acme');
  await s.account('at-other', 'Other');
  id.admin = await s.user('at-acme', 'admin@at.test');
  id.ann = await s.user('at-acme', 'ann@at.test');
  id.bob = await s.user('at-acme', 'bob@at.test');
  // bob keeps no role at all (he got the default ReadOnly): no users or audits permission.
  const readOnly = 'c784abeb-f295-45fb-84ed-19a1652cfb43';
  await vendorCall('DELETE', `${U}/v1/${id.bob}/roles`, { roleIds: [readOnly] }, 'at-acme', 200);
  id.stranger = await s.user('at-other', 'stranger@at.test');
  // sam belongs to both accounts: his password is not Acme's alone.
  id.sam = await s.user('at-other', 'sam@at.test');
  await vendorCall('POST', `${U}/v1/${id.sam}/tenant`, { tenantId: 'at-acme' });
  await s.signIn('admin@at.test');
});
after(async () => s?.t.close());

describe('@frontegg/rest-api audits', () => {
  test("getAudits: each row carries the AuditRowData fields beside the entry's own", async () => {
    await vendorCall('PUT', `${U}/temporary/v1/configuration`, { enabled: true }, undefined, 200);
    await s.sdk.api.teams.updateUser({ id: id.ann, roleIds: [] });
    const query = { sortBy: 'createdAt', sortDirection: 'desc', filter: '', offset: 0, count: 20 } as const;
    const page = await s.sdk.api.audits.getAudits(query);
    assert.ok(page.total >= 1, JSON.stringify(page));
    const row = page.data.find((r) => r.action === 'member.updated' && r.resource === 'ann@at.test');
    assert.ok(row, JSON.stringify(page.data.map((r) => [r.action, r.resource])));
    // The wire.md fields the SDK's type does not declare.
    const entry = row as typeof row & { id: string; actor: { type: string; id: string }; data: object };
    assert.equal(row._id, entry.id);
    assert.equal(row.time, row.createdAt);
    assert.equal(row.updatedAt, row.createdAt);
    assert.ok(!Number.isNaN(Date.parse(row.time)));
    assert.equal(row.user, 'admin@at.test');
    assert.equal(row.email, 'admin@at.test');
    assert.equal(row.actorMail, 'admin@at.test');
    assert.equal(row.vendorId, env);
    assert.equal(row.tenantId, 'at-acme');
    assert.equal(row.severity, 'Info');
    assert.equal(typeof row.ip, 'string');
    assert.deepEqual(row.json, [entry.data]);
    assert.equal(row.__v, 0);
    assert.deepEqual(entry.actor, { type: 'user', id: id.admin }, 'the wire.md fields stay');
    // The SDK's own field names sort too.
    const byTime = await s.sdk.api.audits.getAudits({ ...query, sortBy: 'time', sortDirection: 'asc' });
    assert.equal(byTime.data[0].action, 'account.created');
  });

  test("a vendor's own entry: user, email and resource as it sent them", async () => {
    const custom = {
      severity: 'High',
      action: 'Exported report',
      user: 'Robot',
      email: 'robot@at.test',
      resource: 'Reports',
    };
    await vendorCall('POST', '/audits', custom, 'at-acme', 202);
    const page = await s.sdk.api.audits.getAudits({
      sortBy: 'createdAt',
      sortDirection: 'desc',
      filter: 'Exported',
      offset: 0,
      count: 5,
    });
    const [row] = page.data;
    assert.equal(row.action, 'Exported report');
    assert.deepEqual([row.user, row.email, row.resource, row.severity], ['Robot', 'robot@at.test', 'Reports', 'High']);
  });

  test('getAuditsStats answers IAuditsStats {totalToday, severeThisWeek}', async () => {
    const stats = await s.sdk.api.audits.getAuditsStats({ sortBy: 'createdAt', sortDirection: 'desc', count: 20 });
    assert.ok(stats.totalToday >= 2, JSON.stringify(stats));
    assert.ok(stats.severeThisWeek >= 1, JSON.stringify(stats));
  });

  test('exportAudits to pdf: no such export (404), nothing pretends to be a PDF', async () => {
    const headerProps = [
      {
        _id: 'a',
        name: 'action',
        type: 'string',
        sortable: true,
        filterable: true,
        displayName: 'Action',
        showInTable: true,
        showInMoreInfo: 'no',
      },
    ];
    const params = { headerProps, sortBy: 'createdAt', sortDirection: 'desc', filter: '', offset: 0 } as const;
    await rejectsWith(s.sdk.api.audits.exportAudits({ ...params, endpoint: 'pdf', outputFileName: 'a.pdf' }), 404);
  });
});

describe('@frontegg/rest-api temporary users', () => {
  test("getTemporaryUserConfiguration: a reader of the account's users sees the environment's setting", async () => {
    assert.deepEqual(await s.sdk.api.teams.getTemporaryUserConfiguration(), { enabled: true });
    await as('bob@at.test', () => rejectsWith(s.sdk.api.teams.getTemporaryUserConfiguration(), 403));
  });

  test("updateUserExpirationTime and setPermanentUser change the membership in the admin's account", async () => {
    const before = Date.now();
    await s.sdk.api.teams.updateUserExpirationTime({ userId: id.ann, expirationInSeconds: 3600 });
    const temp = await membership(id.ann, 'at-acme');
    const at = Date.parse(temp?.temporaryExpirationDate ?? '');
    assert.ok(at >= before + 3_500_000 && at <= Date.now() + 3_700_000, JSON.stringify(temp));
    await s.sdk.api.teams.setPermanentUser(id.ann);
    assert.equal((await membership(id.ann, 'at-acme'))?.temporaryExpirationDate, undefined);
  });

  test("another account's user is not found; a member without fe.secure.write.users is refused", async () => {
    const stranger = { userId: id.stranger, expirationInSeconds: 3600 };
    await rejectsWith(s.sdk.api.teams.updateUserExpirationTime(stranger), 404);
    await rejectsWith(s.sdk.api.teams.setPermanentUser(id.stranger), 404);
    await as('bob@at.test', async () => {
      await rejectsWith(s.sdk.api.teams.updateUserExpirationTime({ userId: id.ann, expirationInSeconds: 3600 }), 403);
      await rejectsWith(s.sdk.api.teams.setPermanentUser(id.ann), 403);
    });
    assert.equal((await membership(id.ann, 'at-acme'))?.temporaryExpirationDate, undefined);
  });

  test("the environment-wide setting stays the environment's to change", async () => {
    const token = s.sdk.ContextHolder.for('default').getAccessToken()!;
    const r = await s.t.call('PUT', `${U}/temporary/v1/configuration`, { token, body: { enabled: false } });
    assert.equal(r.status, 403, JSON.stringify(r.body));
  });
});

describe('@frontegg/rest-api groups configuration', () => {
  test('getGroupConfiguration answers IGroupConfigResponse; updating it stays environment-only', async () => {
    const config = await s.sdk.api.groups.getGroupConfiguration();
    assert.equal(typeof config.enabled, 'boolean');
    assert.equal(typeof config.rolesEnabled, 'boolean');
    await rejectsWith(s.sdk.api.groups.updateGroupConfiguration({ enabled: false }), 403);
    await as('bob@at.test', () => rejectsWith(s.sdk.api.groups.getGroupConfiguration(), 403));
  });
});

describe('@frontegg/rest-api tenants.getTenantsUsersCount', () => {
  test("counts the users of the admin's own account (IGetTenantsUserCountResponse)", async () => {
    const access = `/identity/resources/sub-tenants/users/v1/${id.ann}/access`;
    await vendorCall('PUT', access, { allowAccess: true }, 'at-acme', 200);
    const counts = await s.sdk.api.tenants.getTenantsUsersCount({ tenantIds: ['at-acme'] });
    // admin, ann, bob and sam; only ann may reach sub-accounts (the account's default is off).
    assert.deepEqual(counts, [{ tenantId: 'at-acme', totalUsers: 4, totalAccessAllowedUsers: 1 }]);
    await vendorCall('PUT', `${U}/v1/${id.ann}/invisible`, { invisible: true }, undefined, 200);
    const body = { tenantIds: ['at-acme'], excludeInvisibleUsers: true };
    const visible = await s.sdk.api.tenants.getTenantsUsersCount(body);
    assert.deepEqual(visible, [{ tenantId: 'at-acme', totalUsers: 3, totalAccessAllowedUsers: 0 }]);
    await vendorCall('PUT', `${U}/v1/${id.ann}/invisible`, { invisible: false }, undefined, 200);
  });

  test('another account is refused (403), whether or not it exists', async () => {
    await rejectsWith(s.sdk.api.tenants.getTenantsUsersCount({ tenantIds: ['at-acme', 'at-other'] }), 403);
    await rejectsWith(s.sdk.api.tenants.getTenantsUsersCount({ tenantIds: ['at-none'] }), 403);
    await as('bob@at.test', () => rejectsWith(s.sdk.api.tenants.getTenantsUsersCount({ tenantIds: ['at-acme'] }), 403));
  });
});

describe('@frontegg/rest-api users.sendResetBreachedPasswordEmails', () => {
  const BULK = `${U}/v1/passwords/breached/reset/bulk`;
  const token = () => s.sdk.ContextHolder.for('default').getAccessToken()!;

  test('without a body: 400 naming userIds (no record says whose password was breached)', async () => {
    await rejectsWith(s.sdk.api.users.sendResetBreachedPasswordEmails(), 400);
  });

  test('an admin resets the named members of the account; others are not found, shared users are left', async () => {
    const r = await s.t.call('POST', BULK, { token: token(), body: { userIds: [id.bob, id.stranger, id.sam] } });
    assert.equal(r.status, 201, JSON.stringify(r.body));
    assert.deepEqual(r.body, { requested: 3, reset: [id.bob], notFound: [id.stranger], shared: [id.sam] });
    const login = (email: string) =>
      s.t.call('POST', '/identity/resources/auth/v1/user', { body: { email, password: PASSWORD } });
    const signIn = await login('bob@at.test');
    assert.equal(signIn.body.accessToken, undefined, "bob's password no longer signs in");
    for (const email of ['stranger@at.test', 'sam@at.test']) {
      const ok = await login(email);
      assert.equal(typeof ok.body.accessToken, 'string', `${email} is untouched`);
    }
  });

  test('a member without fe.secure.write.users is refused', async () => {
    await as('ann@at.test', async () => {
      const r = await s.t.call('POST', BULK, { token: token(), body: { userIds: [id.admin] } });
      assert.equal(r.status, 403, JSON.stringify(r.body));
    });
  });
});
