import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { AppError } from '../../src/http/errors.ts';
import { startTestApp, type TestApp } from '../helpers/harness.ts';
import { account, user as createUser } from '../fixtures/builders.ts';

let t: TestApp;
let vendor: string;
const CONFIG = '/identity/resources/configurations/v1';
const PASSWORD = `${CONFIG}/password`;
const HISTORY = `${CONFIG}/password-history-policy`;
const LOCKOUT = `${CONFIG}/lockout-policy`;
const USER_CONFIG = '/identity/resources/users/v1/passwords/config';
const READ = 'fe.secure.read.securityPolicy';
const WRITE = 'fe.secure.write.securityPolicy';
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

const DEFAULT_CONFIG = {
  allowPassphrases: true,
  maxLength: 128,
  minLength: 8,
  minPhraseLength: 20,
  minOptionalTestsToPass: 0,
  blockPwnedPasswords: true,
  optionalTests: {
    requireLowercase: false,
    requireUppercase: false,
    requireNumbers: false,
    requireSpecialChars: false,
  },
  requiredTests: { minLength: 8, maxLength: 128, blockPwnedPasswords: true, rejectEmail: true },
};

before(async () => {
  t = await startTestApp();
  vendor = await t.vendorToken();
  for (const tenantId of ['acme', 'globex', 'val', 'gone']) await account(t, { id: tenantId });
  assert.equal((await t.call('DELETE', '/tenants/resources/tenants/v1/gone', { token: vendor })).status, 200);
});
after(async () => t?.close());

/** A vendor call, on the environment level or (with `tenant`) on one account. */
const v = (method: string, url: string, tenant?: string, body?: unknown) =>
  t.call(method, url, { token: vendor, body, headers: tenant ? { 'gatehouse-tenant-id': tenant } : {} });

const weakRules = async (p: Promise<unknown>): Promise<{ rules: string[]; message: string }> => {
  try {
    await p;
  } catch (e) {
    assert.ok(e instanceof AppError, String(e));
    assert.equal(e.code, 'WEAK_PASSWORD');
    assert.equal(e.status, 400);
    assert.equal(e.errorCode, 'GH-41001');
    return { rules: (e.context?.rules as string[]) ?? [], message: e.message };
  }
  assert.fail('expected WEAK_PASSWORD');
};

describe('security policies: defaults', () => {
  test('password policy: the built-in default everywhere until configured', async () => {
    for (const tenant of [undefined, 'acme']) {
      const r = await v('GET', PASSWORD, tenant);
      assert.equal(r.status, 200);
      assert.deepEqual(r.body, DEFAULT_CONFIG);
    }
    const pub = await t.call('GET', USER_CONFIG);
    assert.equal(pub.status, 200, 'no token needed');
    assert.deepEqual(pub.body, DEFAULT_CONFIG);
  });

  test('lockout: the environment default row (enabled, 5 attempts, 15 minutes) applies to every account', async () => {
    const env = await v('GET', LOCKOUT);
    assert.equal(env.status, 200);
    assert.match(env.body.id, UUID);
    assert.match(env.body.createdAt, ISO);
    assert.match(env.body.updatedAt, ISO);
    const { id, createdAt, updatedAt, ...rest } = env.body;
    assert.deepEqual(rest, { tenantId: null, enabled: true, maxAttempts: 5, lockDurationMinutes: 15 });
    assert.deepEqual((await v('GET', LOCKOUT, 'acme')).body, env.body);
    assert.deepEqual((await v('GET', `${LOCKOUT}/vendor`)).body, env.body);
    assert.deepEqual(await t.ctx.passwords.lockoutPolicy(t.db, 'acme'), {
      enabled: true,
      maxAttempts: 5,
      lockDurationSeconds: 900,
    });
    assert.deepEqual(await t.ctx.passwords.lockoutPolicy(t.db), {
      enabled: true,
      maxAttempts: 5,
      lockDurationSeconds: 900,
    });
  });

  test('password history: none configured is a 404 (environment, account, vendor route)', async () => {
    for (const r of [await v('GET', HISTORY), await v('GET', HISTORY, 'acme'), await v('GET', `${HISTORY}/vendor`)]) {
      assert.equal(r.status, 404);
      assert.equal(r.body.errorCode, 'GH-41003');
    }
  });

  test('remember keeps no history while no history policy is enabled anywhere', async () => {
    const created = await createUser(t, 'acme', { email: 'nohistory@acme.test', password: null });
    await t.ctx.passwords.remember(t.db, created.id, await t.ctx.passwords.hash('first-password'));
    const { rows } = await t.db.query<{ n: number }>(
      'SELECT count(*)::int AS n FROM password_history WHERE user_id = $1',
      [created.id],
    );
    assert.equal(rows[0].n, 0);
  });
});

describe('security policies: password configuration', () => {
  test('POST sets the environment policy (201, the whole policy); fields left out keep their value', async () => {
    const r = await v('POST', PASSWORD, undefined, { minLength: 10, optionalTests: { requireNumbers: true } });
    assert.equal(r.status, 201);
    assert.deepEqual(r.body, {
      ...DEFAULT_CONFIG,
      minLength: 10,
      optionalTests: { ...DEFAULT_CONFIG.optionalTests, requireNumbers: true },
      requiredTests: { ...DEFAULT_CONFIG.requiredTests, minLength: 10 },
    });
    assert.deepEqual((await v('GET', PASSWORD)).body, r.body);
    // Flags may also come top-level; a second POST updates.
    const again = await v('POST', PASSWORD, undefined, { requireSpecialChars: true, minOptionalTestsToPass: 2 });
    assert.equal(again.status, 201);
    assert.equal(again.body.minLength, 10);
    assert.equal(again.body.minOptionalTestsToPass, 2);
    assert.deepEqual(again.body.optionalTests, {
      requireLowercase: false,
      requireUppercase: false,
      requireNumbers: true,
      requireSpecialChars: true,
    });
    const back = await v('POST', PASSWORD, undefined, { requireSpecialChars: false, minOptionalTestsToPass: 0 });
    assert.equal(back.body.optionalTests.requireSpecialChars, false);
  });

  test('an account without its own policy inherits the environment one', async () => {
    const env = (await v('GET', PASSWORD)).body;
    assert.equal(env.minLength, 10);
    assert.deepEqual((await v('GET', PASSWORD, 'acme')).body, env);
    assert.deepEqual((await t.call('GET', USER_CONFIG, { headers: { 'gatehouse-tenant-id': 'acme' } })).body, env);
    assert.equal((await t.ctx.passwords.passwordPolicy(t.db, 'acme')).minLength, 10);
  });

  test('a per-account override copies the inherited policy, applies the body, and leaves others alone', async () => {
    const r = await v('POST', PASSWORD, 'acme', { minLength: 12, blockPwnedPasswords: false });
    assert.equal(r.status, 201);
    assert.equal(r.body.minLength, 12);
    assert.equal(r.body.blockPwnedPasswords, false);
    assert.equal(r.body.optionalTests.requireNumbers, true, 'copied from the environment policy');
    assert.deepEqual((await v('GET', PASSWORD, 'acme')).body, r.body);
    assert.equal((await v('GET', PASSWORD)).body.minLength, 10, 'the environment policy is unchanged');
    assert.equal((await v('GET', PASSWORD, 'globex')).body.minLength, 10, 'other accounts still inherit');
    // Later environment changes do not reach an account that has its own policy.
    await v('POST', PASSWORD, undefined, { maxLength: 64 });
    assert.equal((await v('GET', PASSWORD, 'globex')).body.maxLength, 64);
    assert.equal((await v('GET', PASSWORD, 'acme')).body.maxLength, 128);
    assert.equal(
      (await t.call('GET', `${USER_CONFIG}?userId=someone`, { headers: { 'frontegg-tenant-id': 'acme' } })).body
        .minLength,
      12,
    );
    await v('POST', PASSWORD, undefined, { maxLength: 128 });
  });

  test('bad configurations are 400s naming field and rule, and change nothing', async () => {
    const before = (await v('GET', PASSWORD)).body;
    const cases: [unknown, RegExp][] = [
      [{ minLength: 20, maxLength: 16 }, /minLength \(20\) must not be greater than maxLength \(16\)/],
      [{ minLength: 200 }, /body\.minLength must be <= 128/],
      [{ maxLength: 129 }, /body\.maxLength must be <= 128/],
      [{ minLength: 0 }, /body\.minLength must be >= 1/],
      [{ minLength: 8.5 }, /body\.minLength must be integer/],
      [{ minLength: '9' }, /body\.minLength must be integer/],
      [{ minOptionalTestsToPass: 5 }, /body\.minOptionalTestsToPass must be <= 4/],
      [{ minOptionalTestsToPass: -1 }, /body\.minOptionalTestsToPass must be >= 0/],
      [{ allowPassphrases: 'yes' }, /body\.allowPassphrases must be boolean/],
      [{ optionalTests: { requireNumbers: 1 } }, /body\.optionalTests\.requireNumbers must be boolean/],
      [
        { minPhraseLength: 9 },
        /minPhraseLength \(9\) must be at least minLength \(10\) while allowPassphrases is true/,
      ],
      [
        { maxLength: 15 },
        /minPhraseLength \(20\) must not be greater than maxLength \(15\) while allowPassphrases is true/,
      ],
      [
        { optionalTests: { requireNumbers: false }, requireNumbers: true },
        /optionalTests\.requireNumbers and requireNumbers disagree/,
      ],
    ];
    for (const [body, msg] of cases) {
      const r = await v('POST', PASSWORD, undefined, body);
      assert.equal(r.status, 400, JSON.stringify(body));
      assert.equal(r.body.errorCode, 'GH-10001', JSON.stringify(body));
      assert.match(r.body.errors.join(' '), msg, JSON.stringify(body));
    }
    for (const body of [{}, { unknown: 1 }, undefined]) {
      const r = await v('POST', PASSWORD, undefined, body);
      assert.equal(r.status, 400, JSON.stringify(body));
      assert.equal(r.body.errorCode, 'GH-30008');
    }
    // Without passphrases, a phrase length above maxLength does not matter.
    const ok = await v('POST', PASSWORD, 'globex', { allowPassphrases: false, maxLength: 16 });
    assert.equal(ok.status, 201);
    assert.equal(ok.body.minPhraseLength, 20);
    assert.deepEqual((await v('GET', PASSWORD)).body, before);
  });

  test('a tenant header naming no live account is a 404', async () => {
    for (const tenant of ['ghost', 'gone']) {
      for (const [method, url, body] of [
        ['GET', PASSWORD],
        ['POST', PASSWORD, { minLength: 9 }],
        ['GET', HISTORY],
        ['POST', HISTORY, { enabled: true, historySize: 3 }],
        ['PATCH', HISTORY, { enabled: false }],
        ['GET', LOCKOUT],
        ['POST', LOCKOUT, { enabled: true, maxAttempts: 3 }],
        ['PATCH', LOCKOUT, { maxAttempts: 3 }],
      ] as const) {
        const r = await v(method, url, tenant, body);
        assert.equal(r.status, 404, `${method} ${url} ${tenant}`);
        assert.equal(r.body.errorCode, 'GH-30001');
        assert.match(r.body.errors[0], new RegExp(`No account with tenantId ${tenant}`));
      }
      assert.equal((await t.call('GET', USER_CONFIG, { headers: { 'gatehouse-tenant-id': tenant } })).status, 404);
    }
    const { rows } = await t.db.query<{ n: number }>(
      "SELECT count(*)::int AS n FROM lockout_policies WHERE tenant_id IN ('ghost', 'gone')",
    );
    assert.equal(rows[0].n, 0);
  });
});

describe('security policies: password history', () => {
  test('POST creates (201), a second POST is 409, PATCH changes (200)', async () => {
    const r = await v('POST', HISTORY, undefined, { enabled: true, historySize: 3 });
    assert.equal(r.status, 201);
    assert.match(r.body.id, UUID);
    assert.match(r.body.createdAt, ISO);
    assert.deepEqual(
      { ...r.body, id: 0, createdAt: 0, updatedAt: 0 },
      { id: 0, tenantId: null, enabled: true, historySize: 3, createdAt: 0, updatedAt: 0 },
    );
    const dup = await v('POST', HISTORY, undefined, { enabled: false, historySize: 1 });
    assert.equal(dup.status, 409);
    assert.equal(dup.body.errorCode, 'GH-41002');
    assert.equal((await v('GET', HISTORY)).body.historySize, 3);

    const p = await v('PATCH', HISTORY, undefined, { historySize: 5 });
    assert.equal(p.status, 200);
    assert.equal(p.body.id, r.body.id);
    assert.equal(p.body.enabled, true);
    assert.equal(p.body.historySize, 5);
    assert.ok(p.body.updatedAt >= r.body.updatedAt);
    assert.deepEqual((await v('GET', HISTORY)).body, p.body);
    assert.deepEqual((await v('GET', `${HISTORY}/vendor`)).body, p.body);
  });

  test('an account inherits the environment policy; PATCH without its own is 404; POST creates its own', async () => {
    const env = (await v('GET', HISTORY)).body;
    assert.deepEqual((await v('GET', HISTORY, 'acme')).body, env);
    const none = await v('PATCH', HISTORY, 'acme', { enabled: false });
    assert.equal(none.status, 404);
    assert.equal(none.body.errorCode, 'GH-41003');
    assert.match(none.body.errors[0], /Account acme has no password history policy of its own; create it with POST/);

    const own = await v('POST', HISTORY, 'acme', { enabled: true, historySize: 2 });
    assert.equal(own.status, 201);
    assert.equal(own.body.tenantId, 'acme');
    assert.notEqual(own.body.id, env.id);
    assert.equal((await v('POST', HISTORY, 'acme', { enabled: true, historySize: 2 })).status, 409);
    const off = await v('PATCH', HISTORY, 'acme', { enabled: false });
    assert.equal(off.status, 200);
    assert.deepEqual([off.body.enabled, off.body.historySize, off.body.tenantId], [false, 2, 'acme']);
    assert.deepEqual((await v('GET', HISTORY, 'acme')).body, off.body);
    assert.deepEqual((await v('GET', HISTORY)).body, env, 'the environment policy is unchanged');
    assert.deepEqual((await v('GET', `${HISTORY}/vendor`)).body, env);
  });

  test('bad bodies are 400s naming field and rule', async () => {
    const cases: [string, unknown, RegExp][] = [
      ['POST', { enabled: true, historySize: 25 }, /body\.historySize must be <= 24/],
      ['POST', { enabled: true, historySize: 0 }, /body\.historySize must be >= 1/],
      ['POST', { historySize: 3 }, /body\.enabled is required/],
      ['POST', { enabled: true }, /body\.historySize is required/],
      ['POST', { enabled: 'true', historySize: 3 }, /body\.enabled must be boolean/],
      ['PATCH', { historySize: 2.5 }, /body\.historySize must be integer/],
      ['PATCH', { historySize: 99 }, /body\.historySize must be <= 24/],
    ];
    for (const [method, body, msg] of cases) {
      const r = await v(method, HISTORY, 'globex', body);
      assert.equal(r.status, 400, `${method} ${JSON.stringify(body)}`);
      assert.match(r.body.errors.join(' '), msg);
    }
    for (const body of [{}, undefined]) {
      const r = await v('PATCH', HISTORY, undefined, body);
      assert.equal(r.status, 400);
      assert.equal(r.body.errorCode, 'GH-30008');
    }
    assert.equal((await v('GET', HISTORY, 'globex')).body.tenantId, null, 'nothing was created for globex');
  });
});

describe('security policies: lockout', () => {
  test('the environment has its policy from the start: POST is 409, PATCH changes it', async () => {
    const dup = await v('POST', LOCKOUT, undefined, { enabled: true, maxAttempts: 3 });
    assert.equal(dup.status, 409);
    assert.equal(dup.body.errorCode, 'GH-41002');
    const before = (await v('GET', LOCKOUT)).body;
    const r = await v('PATCH', LOCKOUT, undefined, { maxAttempts: 7, lockDurationMinutes: null });
    assert.equal(r.status, 200);
    assert.deepEqual(
      { ...r.body, updatedAt: 0 },
      { ...before, maxAttempts: 7, lockDurationMinutes: null, updatedAt: 0 },
    );
    assert.deepEqual(await t.ctx.passwords.lockoutPolicy(t.db), {
      enabled: true,
      maxAttempts: 7,
      lockDurationSeconds: null,
    });
    assert.deepEqual((await v('GET', `${LOCKOUT}/vendor`)).body, r.body);
  });

  test('per-account override: inherits until POST; 404 on PATCH before; lockDurationMinutes defaults to 15', async () => {
    const env = (await v('GET', LOCKOUT)).body;
    assert.deepEqual((await v('GET', LOCKOUT, 'acme')).body, env);
    const none = await v('PATCH', LOCKOUT, 'acme', { maxAttempts: 3 });
    assert.equal(none.status, 404);
    assert.equal(none.body.errorCode, 'GH-41003');

    const own = await v('POST', LOCKOUT, 'acme', { enabled: true, maxAttempts: 3 });
    assert.equal(own.status, 201);
    const { id, createdAt, updatedAt, ...rest } = own.body;
    assert.match(id, UUID);
    assert.deepEqual(rest, { tenantId: 'acme', enabled: true, maxAttempts: 3, lockDurationMinutes: 15 });
    assert.equal((await v('POST', LOCKOUT, 'acme', { enabled: false, maxAttempts: 3 })).status, 409);
    const p = await v('PATCH', LOCKOUT, 'acme', { lockDurationMinutes: 60 });
    assert.equal(p.status, 200);
    assert.deepEqual([p.body.enabled, p.body.maxAttempts, p.body.lockDurationMinutes], [true, 3, 60]);
    assert.deepEqual(await t.ctx.passwords.lockoutPolicy(t.db, 'acme'), {
      enabled: true,
      maxAttempts: 3,
      lockDurationSeconds: 3600,
    });
    assert.deepEqual(await t.ctx.passwords.lockoutPolicy(t.db, 'globex'), {
      enabled: true,
      maxAttempts: 7,
      lockDurationSeconds: null,
    });
    assert.deepEqual((await v('GET', LOCKOUT)).body, env, 'the environment policy is unchanged');

    const untilUnlocked = await v('POST', LOCKOUT, 'val', {
      enabled: false,
      maxAttempts: 10,
      lockDurationMinutes: null,
    });
    assert.equal(untilUnlocked.status, 201);
    assert.equal(untilUnlocked.body.lockDurationMinutes, null);
    assert.deepEqual(await t.ctx.passwords.lockoutPolicy(t.db, 'val'), {
      enabled: false,
      maxAttempts: 10,
      lockDurationSeconds: null,
    });
  });

  test('bad bodies are 400s naming field and rule', async () => {
    const cases: [string, unknown, RegExp][] = [
      ['POST', { enabled: true, maxAttempts: 0 }, /body\.maxAttempts must be >= 1/],
      ['POST', { enabled: true, maxAttempts: 101 }, /body\.maxAttempts must be <= 100/],
      ['POST', { maxAttempts: 5 }, /body\.enabled is required/],
      ['POST', { enabled: true }, /body\.maxAttempts is required/],
      ['POST', { enabled: true, maxAttempts: 5, lockDurationMinutes: 0 }, /body\.lockDurationMinutes/],
      ['POST', { enabled: true, maxAttempts: 5, lockDurationMinutes: 43_201 }, /body\.lockDurationMinutes/],
      ['PATCH', { lockDurationMinutes: 'soon' }, /body\.lockDurationMinutes/],
      ['PATCH', { maxAttempts: 3.5 }, /body\.maxAttempts must be integer/],
      ['PATCH', { enabled: null }, /body\.enabled must be boolean/],
    ];
    for (const [method, body, msg] of cases) {
      const r = await v(method, LOCKOUT, method === 'POST' ? 'globex' : undefined, body);
      assert.equal(r.status, 400, `${method} ${JSON.stringify(body)}`);
      assert.match(r.body.errors.join(' '), msg, JSON.stringify(body));
    }
    const empty = await v('PATCH', LOCKOUT, undefined, {});
    assert.equal(empty.status, 400);
    assert.equal(empty.body.errorCode, 'GH-30008');
    assert.equal((await v('GET', LOCKOUT, 'globex')).body.tenantId, null, 'nothing was created for globex');
  });
});

describe('security policies: user tokens', () => {
  test('the read permission reads the own account; the tenant header is ignored', async () => {
    const token = await t.userToken({ tenantId: 'acme', permissions: [READ] });
    const lock = await t.call('GET', LOCKOUT, { token, headers: { 'gatehouse-tenant-id': 'globex' } });
    assert.equal(lock.status, 200);
    assert.equal(lock.body.tenantId, 'acme');
    assert.equal((await t.call('GET', PASSWORD, { token })).body.minLength, 12);
    assert.equal((await t.call('GET', HISTORY, { token })).body.tenantId, 'acme');
    assert.equal((await t.call('GET', `${LOCKOUT}/vendor`, { token })).body.tenantId, null);
    assert.equal((await t.call('GET', USER_CONFIG, { token })).body.minLength, 12);
  });

  test('writes need the write permission (wildcards count) and act on the own account', async () => {
    const reader = await t.userToken({ tenantId: 'globex', permissions: [READ] });
    const denied = await t.call('POST', PASSWORD, { token: reader, body: { minLength: 9 } });
    assert.equal(denied.status, 403);
    assert.equal(denied.body.errorCode, 'GH-20004');
    assert.equal((await t.call('PATCH', LOCKOUT, { token: reader, body: { maxAttempts: 4 } })).status, 403);

    const writer = await t.userToken({ tenantId: 'globex', permissions: [WRITE] });
    const w = await t.call('POST', LOCKOUT, {
      token: writer,
      headers: { 'gatehouse-tenant-id': 'acme' },
      body: { enabled: true, maxAttempts: 4 },
    });
    assert.equal(w.status, 201);
    assert.equal(w.body.tenantId, 'globex');
    assert.equal((await t.call('GET', LOCKOUT, { token: writer })).status, 403, 'write does not imply read');
    assert.equal((await v('GET', LOCKOUT, 'acme')).body.maxAttempts, 3, 'acme untouched');

    const admin = await t.userToken({ tenantId: 'globex', permissions: ['fe.secure.*'] });
    assert.equal((await t.call('PATCH', LOCKOUT, { token: admin, body: { maxAttempts: 6 } })).body.maxAttempts, 6);
    assert.equal((await t.call('GET', LOCKOUT, { token: admin })).body.maxAttempts, 6);
  });

  test('no permission is a 403; a removed account is a 404; no token is a 401', async () => {
    const none = await t.userToken({ tenantId: 'acme' });
    for (const url of [PASSWORD, HISTORY, LOCKOUT, `${LOCKOUT}/vendor`, `${HISTORY}/vendor`]) {
      const r = await t.call('GET', url, { token: none });
      assert.equal(r.status, 403, url);
      assert.equal(r.body.errorCode, 'GH-20004');
    }
    const ghost = await t.userToken({ tenantId: 'gone', permissions: [READ] });
    assert.equal((await t.call('GET', LOCKOUT, { token: ghost })).status, 404);
    assert.equal((await t.call('GET', LOCKOUT)).status, 401);
    assert.equal((await t.call('POST', PASSWORD, { body: { minLength: 9 } })).status, 401);
  });
});

describe('security policies: passwords service', () => {
  test('hash and verify round-trip through the context', async () => {
    const stored = await t.ctx.passwords.hash('Tr0ub4dor&3-horse');
    assert.match(stored, /^\$argon2id\$v=19\$m=19456,t=2,p=1\$/);
    assert.deepEqual(await t.ctx.passwords.verify('Tr0ub4dor&3-horse', stored), { ok: true, needsRehash: false });
    assert.deepEqual(await t.ctx.passwords.verify('tr0ub4dor&3-horse', stored), { ok: false, needsRehash: false });
    assert.deepEqual(await t.ctx.passwords.verify('x', null), { ok: false, needsRehash: false });
    await t.ctx.passwords.decoy('anything');
  });

  test('validate names each failed rule', async () => {
    const set = await v('POST', PASSWORD, 'val', {
      minLength: 10,
      maxLength: 24,
      allowPassphrases: false,
      blockPwnedPasswords: true,
      optionalTests: { requireUppercase: true, requireNumbers: true },
    });
    assert.equal(set.status, 201);
    const check = (password: string, ctx: { userId?: string; email?: string } = {}) =>
      t.ctx.passwords.validate(t.db, password, { tenantId: 'val', ...ctx });

    let r = await weakRules(check('Ab1'));
    assert.deepEqual(r.rules, ['minLength']);
    assert.match(r.message, /must be at least 10 characters long \(minLength\)/);
    r = await weakRules(check(`Ab1${'x'.repeat(30)}`));
    assert.deepEqual(r.rules, ['maxLength']);
    assert.match(r.message, /must be at most 24 characters long \(maxLength\)/);
    r = await weakRules(check('abcdefghij1'));
    assert.deepEqual(r.rules, ['requireUppercase']);
    r = await weakRules(check('abc'));
    assert.deepEqual(r.rules, ['minLength', 'requireUppercase', 'requireNumbers']);
    r = await weakRules(check('Password123'));
    assert.deepEqual(r.rules, ['blockPwnedPasswords']);
    assert.match(r.message, /10,000 most common passwords/);
    r = await weakRules(check('Qwerty123456'));
    assert.deepEqual(r.rules, ['blockPwnedPasswords']);
    await check('Xx9JohnSmithy', { email: 'John.Smithy@example.com' }); // the name part is john.smithy, not johnsmithy
    r = await weakRules(check('My-John.Smithy-9', { email: 'John.Smithy@example.com' }));
    assert.deepEqual(r.rules, ['email']);
    assert.match(r.message, /must not contain the email address or its name part \(email\)/);

    await check('Tr0ubadour-Horse9');
    await check('Tr0ubadour-Horse9', { email: 'jo@example.com' }); // name parts under 3 characters are only compared whole
    // Without an account the environment policy applies (minimum 10 there).
    await weakRules(t.ctx.passwords.validate(t.db, 'short1'));
  });

  test('validate: passphrases skip the character-class rules when allowed', async () => {
    await v('POST', PASSWORD, 'val', { allowPassphrases: true, minPhraseLength: 18 });
    await t.ctx.passwords.validate(t.db, 'quiet lantern meadow', { tenantId: 'val' });
    const r = await weakRules(t.ctx.passwords.validate(t.db, 'quiet lantern', { tenantId: 'val' }));
    assert.deepEqual(r.rules, ['requireUppercase', 'requireNumbers']);
  });

  test('validate rejects the last N passwords of the history policy; remember keeps what policies need', async () => {
    const P = t.ctx.passwords;
    const hist = await v('POST', HISTORY, 'val', { enabled: true, historySize: 2 });
    assert.equal(hist.status, 201);
    // History belongs to a real user (it is deleted with the user).
    const user = (await createUser(t, 'val', { email: 'history@val.test', password: null })).id;
    const pw = ['First-Passw0rd', 'Second-Passw0rd', 'Third-Passw0rd'];
    for (const p of pw) await P.remember(t.db, user, await P.hash(p));

    for (const p of [pw[2], pw[1]]) {
      const r = await weakRules(P.validate(t.db, p, { tenantId: 'val', userId: user }));
      assert.deepEqual(r.rules, ['history'], p);
      assert.match(r.message, /must not be one of the last 2 passwords \(history\)/);
    }
    await P.validate(t.db, pw[0], { tenantId: 'val', userId: user }); // third from last: allowed with historySize 2
    await P.validate(t.db, pw[2], { tenantId: 'val' }); // no user, no history check
    await P.validate(t.db, pw[2], { tenantId: 'val', userId: '00000000-0000-4000-8000-000000000000' });
    await P.validate(t.db, pw[2], { tenantId: 'val', userId: 'not-a-uuid' });

    // The environment's enabled policy keeps 5: remember stores what the largest enabled policy needs.
    const count = async () =>
      (await t.db.query<{ n: number }>('SELECT count(*)::int AS n FROM password_history WHERE user_id = $1', [user]))
        .rows[0].n;
    assert.equal(await count(), 3);
    for (const p of ['a-Passw0rd-4', 'a-Passw0rd-5', 'a-Passw0rd-6']) await P.remember(t.db, user, await P.hash(p));
    assert.equal(await count(), 5);

    // Disabling history at the account turns the check off there.
    await v('PATCH', HISTORY, 'val', { enabled: false });
    await P.validate(t.db, 'a-Passw0rd-6', { tenantId: 'val', userId: user });
    await P.forgetUser(t.db, user);
    assert.equal(await count(), 0);
    await P.remember(t.db, user, await P.hash('a-Passw0rd-7'));
    assert.equal(await count(), 1);
    await t.call('DELETE', `/identity/resources/users/v1/${user}`, { token: await t.vendorToken() });
    assert.equal(await count(), 0, 'deleting the user deletes its history');
  });

  test("forgetAccount drops an account's own policies; it inherits again", async () => {
    await t.ctx.passwords.forgetAccount(t.db, 'acme');
    assert.equal((await v('GET', LOCKOUT, 'acme')).body.tenantId, null);
    assert.equal((await v('GET', HISTORY, 'acme')).body.tenantId, null);
    assert.equal((await v('GET', PASSWORD, 'acme')).body.minLength, 10);
  });
});
