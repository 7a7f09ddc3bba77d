import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, describe, test } from 'node:test';
import { USERS_MIGRATION_JOB } from '../../src/modules/user-migration/index.ts';
import { startTestApp, type TestApp } from '../helpers/harness.ts';
import { account } from '../fixtures/builders.ts';
import { ENV, waitFor } from '../helpers/user-migration.ts';

const M = '/identity/resources/migrations/v1';
const LOGIN = '/identity/resources/auth/v1/user';
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const ARGON2ID = /^\$argon2id\$v=19\$m=19456,t=2,p=1\$/;
const VECTORS = JSON.parse(readFileSync(new URL('../fixtures/hash-vectors.json', import.meta.url), 'utf8')) as {
  vectors: { name: string; type: string; password: string; passwordHash: string; passwordHashConfig?: string }[];
};

let t: TestApp;
let vendor: string;
before(async () => {
  t = await startTestApp({ ...ENV, JOB_CHUNK_SIZE: '3' });
  vendor = await t.vendorToken();
  for (const tenantId of ['um-1', 'um-2']) await account(t, { id: tenantId });
});
after(async () => t?.close());

const migrate = (body: unknown) => t.call('POST', `${M}/local`, { token: vendor, body });
const login = (email: string, password: string) => t.call('POST', LOGIN, { body: { email, password } });
const createdEvents = async (userIds: string[]) =>
  (
    await t.db.query<{ entity_id: string; tenant_id: string; data: Record<string, unknown> }>(
      `SELECT entity_id, tenant_id, data FROM events WHERE event_key = 'user.created' AND entity_type = 'user' AND entity_id = ANY($1::text[]) ORDER BY seq`,
      [userIds],
    )
  ).rows;
const storedHash = async (email: string) =>
  (await t.db.query<{ password_hash: string | null }>('SELECT password_hash FROM users WHERE email = $1', [email]))
    .rows[0]?.password_hash;

describe('imported password hashes (vectors made by independent tools)', () => {
  test('every type and pbkdf2 encoding: wrong password fails, right one signs in, the hash becomes argon2id', async () => {
    const types = new Set<string>();
    for (const [i, v] of VECTORS.vectors.entries()) {
      types.add(v.type);
      const email = `vector-${i}@hash.test`;
      const r = await migrate({
        email,
        tenantId: 'um-1',
        passwordHash: v.passwordHash,
        passwordHashType: v.type,
        ...(v.passwordHashConfig ? { passwordHashConfig: v.passwordHashConfig } : {}),
      });
      assert.equal(r.status, 201, `${v.name}: ${JSON.stringify(r.body)}`);
      const wrong = await login(email, v.password + '!');
      assert.equal(wrong.status, 401, `${v.name}: wrong password`);
      assert.doesNotMatch((await storedHash(email))!, ARGON2ID, `${v.name}: no rehash after a failure`);
      const right = await login(email, v.password);
      assert.equal(right.status, 200, `${v.name}: ${JSON.stringify(right.body)}`);
      assert.ok(right.body.accessToken, v.name);
      assert.match((await storedHash(email))!, ARGON2ID, `${v.name}: rehashed in the sign-in`);
      assert.equal((await login(email, v.password)).status, 200, `${v.name}: signs in again with the new hash`);
      assert.equal((await login(email, v.password + '!')).status, 401);
    }
    assert.deepEqual([...types].sort(), ['argon2', 'bcrypt', 'firebase-scrypt', 'pbkdf2', 'scrypt', 'sha1', 'sha256']);
    const encodings = new Set(
      VECTORS.vectors
        .filter((v) => v.type === 'pbkdf2')
        .flatMap((v) => {
          const c = JSON.parse(v.passwordHashConfig!);
          return [c.keyEncodingType, c.saltEncodingType];
        }),
    );
    for (const e of [
      'ascii',
      'utf8',
      'utf-8',
      'utf16le',
      'ucs2',
      'ucs-2',
      'base64',
      'latin1',
      'binary',
      'hex',
      undefined,
    ])
      assert.ok(encodings.has(e), String(e));
  });

  test('an absent or unrecognised hash answers the reset flow, never a silent failure', async () => {
    for (const [email, extra] of [
      ['nohash@hash.test', {}],
      ['unknown@hash.test', { passwordHash: 'md5:5f4dcc3b5aa765d61d8327deb882cf99' }],
    ] as const) {
      assert.equal((await migrate({ email, tenantId: 'um-1', ...extra })).status, 201);
      const r = await login(email, 'whatever-password');
      assert.equal(r.status, 200, JSON.stringify(r.body));
      assert.match(r.body.resetPasswordToken, /^[A-Za-z0-9_-]{43}$/);
      assert.equal(r.body.accessToken, undefined);
      assert.equal(r.body.userEmail, email);
      const { rows } = await t.db.query<{ n: number }>(
        'SELECT count(*)::int AS n FROM password_reset_tokens p JOIN users u ON u.id = p.user_id WHERE u.email = $1',
        [email],
      );
      assert.equal(rows[0].n, 1, 'stored (hashed)');
    }
    // A bcrypt string without a type describes itself and verifies.
    const v = VECTORS.vectors.find((x) => x.type === 'bcrypt')!;
    assert.equal(
      (await migrate({ email: 'selfdesc@hash.test', tenantId: 'um-1', passwordHash: v.passwordHash })).status,
      201,
    );
    assert.equal((await login('selfdesc@hash.test', v.password)).status, 200);
  });
});

describe('migrate one user', () => {
  test('every field: account, default roles, metadata, provider, phone, MFA secret never returned, default application', async () => {
    const r = await migrate({
      email: 'Full@One.test',
      tenantId: 'um-1',
      username: 'full.one',
      name: 'Full One',
      profilePictureUrl: 'https://p.example/x.png',
      phoneNumber: '+15550001111',
      phoneNumberType: 'mfa',
      provider: 'google',
      metadata: '{"a":1}',
      vendorMetadata: '{"v":true}',
      verifyUser: true,
      authenticatorAppMfaSecret: 'JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP',
    });
    assert.equal(r.status, 201, JSON.stringify(r.body));
    const u = r.body;
    assert.match(u.id, UUID);
    assert.equal(u.email, 'full@one.test');
    assert.equal(u.username, 'full.one');
    assert.equal(u.tenantId, 'um-1');
    assert.deepEqual(u.tenantIds, ['um-1']);
    assert.equal(u.verified, true);
    assert.equal(u.mfaEnrolled, true);
    assert.equal(u.provider, 'google');
    assert.equal(u.phoneNumber, '+15550001111');
    assert.deepEqual(JSON.parse(u.metadata), { a: 1 });
    assert.deepEqual(JSON.parse(u.vendorMetadata), { v: true });
    assert.ok(!JSON.stringify(u).includes('JBSWY3DP'), 'the MFA secret is never answered');
    const row = (
      await t.db.query<any>('SELECT phone_number_type, authenticator_mfa_secret_enc FROM users WHERE id = $1', [u.id])
    ).rows[0];
    assert.equal(row.phone_number_type, 'mfa');
    assert.match(row.authenticator_mfa_secret_enc, /^v1\./, 'sealed');
    assert.ok(!row.authenticator_mfa_secret_enc.includes('JBSWY3DP'));
    const apps = await t.call('GET', `/identity/resources/applications/v1/${u.id}/apps`, { token: vendor });
    const def = await t.call('GET', '/applications/resources/applications/v1/default', { token: vendor });
    assert.deepEqual(apps.body, [def.body.id]);
    // The outbox: one user.created, without the hash, secret or metadata.
    assert.deepEqual(await createdEvents([u.id]), [
      {
        entity_id: u.id,
        tenant_id: 'um-1',
        data: { userId: u.id, email: 'full@one.test', tenantId: 'um-1', source: 'migration' },
      },
    ]);
  });

  test('defaults: provider local, unverified until the verify-user call; roleIds or default roles', async () => {
    const created = await t.call('POST', '/identity/resources/roles/v1', {
      token: vendor,
      body: [
        { key: 'um-default', name: 'UM default', isDefault: true, level: 1 },
        { key: 'um-other', name: 'UM other', level: 1 },
      ],
    });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    const other = { body: created.body.find((x: any) => x.key === 'um-other') };
    const a = await migrate({ email: 'plain@one.test', tenantId: 'um-2' });
    assert.equal(a.status, 201);
    assert.equal(a.body.provider, 'local');
    assert.equal(a.body.verified, false);
    assert.ok(
      a.body.roles.some((x: any) => x.key === 'um-default'),
      'the default roles',
    );
    assert.ok(!a.body.roles.some((x: any) => x.key === 'um-other'));
    const v = await t.call('POST', `/identity/resources/users/v1/${a.body.id}/verify`, { token: vendor });
    assert.equal(v.status, 200);
    assert.equal(v.body.verified, true);
    const b = await migrate({ email: 'roles@one.test', tenantId: 'um-2', roleIds: [other.body.id] });
    assert.deepEqual(
      b.body.roles.map((x: any) => x.key),
      ['um-other'],
    );
  });

  test('bad input: 400 naming the field, 404 unknown account, 409 duplicates', async () => {
    const base = { tenantId: 'um-1' };
    const cases: [unknown, number, RegExp?][] = [
      [{ tenantId: 'um-1' }, 400, /email/],
      [{ email: 'x@bad.test' }, 400, /tenantId/],
      [{ email: 'x@bad.test', tenantId: 'nope' }, 404, /nope/],
      [{ email: 'full@one.test', ...base }, 409, /already exists/],
      [{ email: 'x@bad.test', ...base, phoneNumber: '+15550001111' }, 409, /Phone/],
      [{ email: 'x@bad.test', ...base, phoneNumber: '555 1234' }, 400, /phoneNumber/],
      [{ email: 'x@bad.test', ...base, profilePictureUrl: 'x'.repeat(4096) }, 400, /profilePictureUrl/],
      [
        {
          email: 'x@bad.test',
          ...base,
          passwordHash: 'a$b',
          passwordHashType: 'scrypt',
          passwordHashConfig: 'x'.repeat(4096),
        },
        400,
        /passwordHashConfig/,
      ],
      [
        { email: 'x@bad.test', ...base, passwordHash: 'a$b', passwordHashType: 'scrypt', passwordHashConfig: '{nope' },
        400,
        /not valid JSON/,
      ],
      [
        {
          email: 'x@bad.test',
          ...base,
          passwordHash: 'a$00',
          passwordHashType: 'scrypt',
          passwordHashConfig: '{"saltSeparator":"$","N":16,"r":1,"p":1}',
        },
        400,
        /must hold keyLen/,
      ],
      [
        {
          email: 'x@bad.test',
          ...base,
          passwordHash: 'a$b',
          passwordHashType: 'firebase-scrypt',
          passwordHashConfig: '{"memCost":14,"rounds":8,"saltSeparator":"Bw=="}',
        },
        400,
        /signerKey/,
      ],
      [
        {
          email: 'x@bad.test',
          ...base,
          passwordHash: 'x',
          passwordHashType: 'pbkdf2',
          passwordHashConfig:
            '{"saltSeparator":"$","iterations":1,"keyLen":32,"digest":"sha256","keyEncodingType":"ebcdic"}',
        },
        400,
        /keyEncodingType/,
      ],
      [{ email: 'x@bad.test', ...base, passwordHash: 'x', passwordHashType: 'md5' }, 400, /passwordHashType/],
      [{ email: 'x@bad.test', ...base, passwordHash: '$2b$10$short', passwordHashType: 'bcrypt' }, 400, /bcrypt/],
      [{ email: 'x@bad.test', ...base, provider: 'myspace' }, 400, /provider/],
      [{ email: 'x@bad.test', ...base, metadata: '[1]' }, 400, /metadata/],
      [{ email: 'x@bad.test', ...base, phoneNumberType: 'auth' }, 400, /phoneNumber/],
    ];
    for (const [body, status, message] of cases) {
      const r = await migrate(body);
      assert.equal(r.status, status, `${JSON.stringify(body).slice(0, 200)} → ${JSON.stringify(r.body)}`);
      if (message) assert.match(r.body.errors.join(' '), message, JSON.stringify(r.body));
    }
    assert.equal(
      (await t.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM users WHERE email = 'x@bad.test'`)).rows[0].n,
      0,
    );
  });

  test('applications: auto-assign ones receive migrated users; others only through the users-applications route', async () => {
    const auto = await t.call('POST', '/applications/resources/applications/v1', {
      token: vendor,
      body: { name: 'Auto', autoAssign: true },
    });
    const manual = await t.call('POST', '/applications/resources/applications/v1', {
      token: vendor,
      body: { name: 'Manual' },
    });
    assert.equal(auto.status, 201);
    const u = (await migrate({ email: 'apps@one.test', tenantId: 'um-1' })).body;
    const def = (await t.call('GET', '/applications/resources/applications/v1/default', { token: vendor })).body;
    const appsOf = async () =>
      (await t.call('GET', `/identity/resources/applications/v1/${u.id}/apps`, { token: vendor })).body.sort();
    assert.deepEqual(await appsOf(), [def.id, auto.body.id].sort());
    const assigned = await t.call('POST', '/identity/resources/applications/v1', {
      token: vendor,
      body: { appId: manual.body.id, tenantId: 'um-1', userIds: [u.id] },
    });
    assert.equal(assigned.status, 201, JSON.stringify(assigned.body));
    assert.equal(assigned.body[0].appId, manual.body.id);
    assert.deepEqual(await appsOf(), [def.id, auto.body.id, manual.body.id].sort());
    assert.deepEqual(
      (await t.call('GET', `/identity/resources/applications/v1/${manual.body.id}/users`, { token: vendor })).body,
      [u.id],
    );
    assert.equal(
      (
        await t.call('DELETE', '/identity/resources/applications/v1', {
          token: vendor,
          body: { appId: manual.body.id, tenantId: 'um-1', userIds: [u.id] },
        })
      ).status,
      200,
    );
    assert.deepEqual(await appsOf(), [def.id, auto.body.id].sort());
    await t.db.query('UPDATE applications SET auto_assign = false WHERE id = $1', [auto.body.id]);
  });
});

describe('migrate users in bulk', () => {
  test('202 at once; each rejected user one error entry while the others land', async () => {
    const v = VECTORS.vectors.find((x) => x.type === 'pbkdf2')!;
    const users = [
      /* 0 */ {
        email: 'b0@bulk.test',
        tenantId: 'um-1',
        passwordHash: v.passwordHash,
        passwordHashType: 'pbkdf2',
        passwordHashConfig: v.passwordHashConfig,
      },
      /* 1 */ { email: 'b1@bulk.test', tenantId: 'nope' },
      /* 2 */ { email: 'b0@bulk.test', tenantId: 'um-1' },
      /* 3 */ { email: 'full@one.test', tenantId: 'um-1' },
      /* 4 */ { tenantId: 'um-1' },
      /* 5 */ { email: 'b5@bulk.test', tenantId: 'um-2', phoneNumber: '+15550001111' },
      /* 6 */ {
        email: 'b6@bulk.test',
        tenantId: 'um-2',
        passwordHash: 'x',
        passwordHashType: 'scrypt',
        passwordHashConfig: '{}',
      },
      /* 7 */ { email: 'b7@bulk.test', tenantId: 'um-2', metadata: '{"k":"v"}', verifyUser: true },
      /* 8 */ {
        email: 'B8@bulk.test',
        tenantId: 'um-2',
        username: 'b8.user',
        phoneNumber: '+15550002222',
        phoneNumberType: 'auth',
      },
      /* 9 */ { email: 'b9@bulk.test', tenantId: 'um-1', username: 'B8.USER' },
      /* 10 */ { email: 'b10@bulk.test', tenantId: 'um-1', phoneNumber: '+15550002222' },
    ];
    const r = await t.call('POST', `${M}/local/bulk`, { token: vendor, body: { users } });
    assert.equal(r.status, 202, JSON.stringify(r.body));
    assert.match(r.body.migrationId, UUID);
    const s = await waitFor(t, r.body.migrationId, (x) => x.state === 'completed');
    assert.equal(s.total, 11);
    assert.equal(s.succeeded, 3);
    assert.equal(s.failed, 8);
    assert.deepEqual(
      s.errors.map((e: any) => [e.index, e.email, e.code]),
      [
        [1, 'b1@bulk.test', 'GH-30001'],
        [2, 'b0@bulk.test', 'GH-30301'],
        [3, 'full@one.test', 'GH-42002'],
        [4, null, 'GH-10001'],
        [5, 'b5@bulk.test', 'GH-42004'],
        [6, 'b6@bulk.test', 'GH-44001'],
        [9, 'b9@bulk.test', 'GH-42003'],
        [10, 'b10@bulk.test', 'GH-42004'],
      ],
    );
    for (const e of s.errors) assert.deepEqual(Object.keys(e), ['index', 'email', 'code', 'message']);
    assert.equal((await login('b0@bulk.test', v.password)).status, 200);
    assert.match((await storedHash('b0@bulk.test'))!, ARGON2ID);
    const b7 = (await t.db.query<any>(`SELECT verified, metadata FROM users WHERE email = 'b7@bulk.test'`)).rows[0];
    assert.deepEqual(b7, { verified: true, metadata: { k: 'v' } });
    // Every row of a bulk-imported user, as the single migration writes it: membership, default roles, phone
    // (primary), default application; and one user.created per imported user, none for a rejected one.
    const ids = (
      await t.db.query<{ id: string; email: string }>(
        `SELECT id::text, email FROM users WHERE email LIKE 'b%@bulk.test' ORDER BY email`,
      )
    ).rows;
    assert.deepEqual(
      ids.map((x) => x.email),
      ['b0@bulk.test', 'b7@bulk.test', 'b8@bulk.test'],
    );
    const b8 = (
      await t.call('GET', `/identity/resources/users/v1/${ids[2].id}`, {
        token: vendor,
        headers: { 'gatehouse-tenant-id': 'um-2' },
      })
    ).body;
    assert.equal(b8.username, 'b8.user');
    assert.equal(b8.phoneNumber, '+15550002222');
    assert.deepEqual(b8.tenantIds, ['um-2']);
    const defaults = (
      await t.db.query<{ key: string }>(
        `SELECT key FROM roles WHERE is_default AND (tenant_id IS NULL OR tenant_id = 'um-2') ORDER BY key`,
      )
    ).rows.map((r) => r.key);
    assert.ok(defaults.length >= 1, 'the default roles of um-2');
    assert.deepEqual(b8.roles.map((r: any) => r.key).sort(), defaults);
    const phone = (
      await t.db.query<any>(`SELECT is_primary FROM user_phone_numbers WHERE phone_number = '+15550002222'`)
    ).rows;
    assert.deepEqual(phone, [{ is_primary: true }]);
    const def = (await t.call('GET', '/applications/resources/applications/v1/default', { token: vendor })).body;
    for (const { id } of ids)
      assert.deepEqual(
        (await t.call('GET', `/identity/resources/applications/v1/${id}/apps`, { token: vendor })).body,
        [def.id],
      );
    const events = await createdEvents(ids.map((x) => x.id));
    assert.deepEqual(
      events.map((e) => e.data),
      [
        { userId: ids[0].id, email: 'b0@bulk.test', tenantId: 'um-1', source: 'migration' },
        { userId: ids[1].id, email: 'b7@bulk.test', tenantId: 'um-2', source: 'migration' },
        { userId: ids[2].id, email: 'b8@bulk.test', tenantId: 'um-2', source: 'migration' },
      ],
    );
    const stray = await t.db.query(
      `SELECT 1 FROM events WHERE event_key = 'user.created' AND data->>'email' IN ('b1@bulk.test', 'b5@bulk.test', 'b9@bulk.test', 'b10@bulk.test')`,
    );
    assert.equal(stray.rows.length, 0);
  });

  test('an empty or oversized request is a 400; an unknown id a 404', async () => {
    assert.equal((await t.call('POST', `${M}/local/bulk`, { token: vendor, body: { users: [] } })).status, 400);
    const many = Array.from({ length: 1001 }, (_, i) => ({ email: `m${i}@x.test`, tenantId: 'um-1' }));
    assert.equal((await t.call('POST', `${M}/local/bulk`, { token: vendor, body: { users: many } })).status, 400);
    assert.equal(
      (await t.call('GET', `${M}/local/bulk/status/00000000-0000-4000-8000-000000000000`, { token: vendor })).status,
      404,
    );
  });

  test('a crash mid-job resumes on another server: every user exactly once', async () => {
    const env = { ...ENV, JOB_CHUNK_SIZE: '5', JOB_LEASE_MS: '300' };
    const first = await startTestApp(env);
    let second: TestApp | undefined;
    try {
      const token = await first.vendorToken();
      await account(first, { id: 'crash-acc', name: 'Crash' });
      const users = Array.from({ length: 300 }, (_, i) =>
        i % 50 === 7
          ? { email: `crash-${i}@x.test`, tenantId: 'missing' }
          : { email: `crash-${i}@x.test`, tenantId: 'crash-acc', passwordHash: VECTORS.vectors[0].passwordHash },
      );
      const r = await first.call('POST', `${M}/local/bulk`, { token, body: { users } });
      assert.equal(r.status, 202);
      const id = r.body.migrationId;
      await waitFor(first, id, (s) => s.state === 'running' && s.succeeded >= 20);
      await first.ctx.jobs.crash();
      const partial = await waitFor(first, id, () => true);
      assert.ok(partial.succeeded + partial.failed < 300, 'the crash came mid-job');
      second = await startTestApp(env, { db: first.db });
      const done = await waitFor(second, id, (s) => s.state === 'completed');
      assert.equal(done.succeeded, 294);
      assert.deepEqual(
        done.errors.map((e: any) => e.index),
        [7, 57, 107, 157, 207, 257],
      );
      const { rows } = await second.db.query<{ n: number; d: number }>(
        `SELECT count(*)::int AS n, count(DISTINCT email)::int AS d FROM users WHERE email LIKE 'crash-%'`,
      );
      assert.deepEqual(rows[0], { n: 294, d: 294 });
      const m = (
        await second.db.query<{ n: number }>(
          `SELECT count(*)::int AS n FROM user_tenants WHERE tenant_id = 'crash-acc'`,
        )
      ).rows[0];
      assert.equal(m.n, 294);
      const job = (
        await second.db.query<any>('SELECT state, attempts FROM jobs WHERE kind = $1', [USERS_MIGRATION_JOB])
      ).rows[0];
      assert.deepEqual(job, { state: 'completed', attempts: 2 });
    } finally {
      await second?.close();
      await first.close();
    }
  });
});

describe('applications: the ApplicationsResponse fields and the list filters', () => {
  const A = '/applications/resources/applications/v1';
  const create = (body: Record<string, unknown>) => t.call('POST', A, { token: vendor, body });
  const list = async (query: string) => {
    const r = await t.call('GET', `${A}?${query}`, { token: vendor });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    return r.body as Record<string, unknown>[];
  };

  test('create answers every field: vendorId (the environment), accessType, logoURL, type, frontendStack; defaults when omitted', async () => {
    const full = await create({
      name: 'Portal',
      appURL: 'https://portal.test',
      loginURL: 'https://portal.test/login',
      logoURL: 'https://portal.test/logo.png',
      accessType: 'MANAGED_ACCESS',
      type: 'mobile-ios',
      frontendStack: 'next.js',
      isActive: true,
    });
    assert.equal(full.status, 201, JSON.stringify(full.body));
    assert.match(full.body.id, UUID);
    assert.equal(full.body.vendorId, t.ctx.environment.id);
    const { id: _id, createdAt, updatedAt, ...rest } = full.body;
    assert.ok(!Number.isNaN(Date.parse(createdAt)) && !Number.isNaN(Date.parse(updatedAt)));
    assert.deepEqual(rest, {
      vendorId: t.ctx.environment.id,
      name: 'Portal',
      appURL: 'https://portal.test',
      loginURL: 'https://portal.test/login',
      logoURL: 'https://portal.test/logo.png',
      accessType: 'MANAGED_ACCESS',
      type: 'mobile-ios',
      frontendStack: 'next.js',
      isDefault: false,
      autoAssign: false,
      isActive: true,
      description: '',
      metadata: {},
      appHost: '',
      allowDcr: false,
      // As an OpenID client (docs/openid-provider.md): first-party, no redirect URI of its own yet.
      isFirstParty: true,
      redirectUris: [],
    });
    const bare = await create({ name: 'Bare' });
    assert.equal(bare.status, 201, JSON.stringify(bare.body));
    assert.equal(bare.body.accessType, 'FREE_ACCESS');
    assert.equal(bare.body.type, 'web');
    assert.equal(bare.body.logoURL, '');
    assert.equal('frontendStack' in bare.body, false, 'not stated: absent');
    // The seeded default application (rows from before migration 0029) answers the defaults too.
    const def = await t.call('GET', `${A}/default`, { token: vendor });
    assert.equal(def.status, 200);
    assert.equal(def.body.isDefault, true);
    assert.equal(def.body.vendorId, t.ctx.environment.id);
    assert.deepEqual([def.body.accessType, def.body.type, def.body.logoURL], ['FREE_ACCESS', 'web', '']);
    const listed = (await list(`ids=${full.body.id}`))[0];
    assert.deepEqual(listed, full.body, 'the list answers the same record');
  });

  test('list filters: _accessType, _isDefault, _isActive, ids (comma list or repeated), type', async () => {
    const mk = async (body: Record<string, unknown>) => {
      const r = await create(body);
      assert.equal(r.status, 201, JSON.stringify(r.body));
      return r.body.id as string;
    };
    const a = await mk({ name: 'F-web', accessType: 'FREE_ACCESS', type: 'web' });
    const b = await mk({ name: 'M-agent', accessType: 'MANAGED_ACCESS', type: 'agent' });
    const c = await mk({ name: 'M-off', accessType: 'MANAGED_ACCESS', type: 'web', isActive: false });
    const ids = `ids=${a},${b},${c}`;
    const names = (items: Record<string, unknown>[]) => items.map((x) => x.name).sort();
    assert.deepEqual(names(await list(ids)), ['F-web', 'M-agent', 'M-off']);
    assert.deepEqual(names(await list(`ids=${a}&ids=${c}`)), ['F-web', 'M-off']);
    assert.deepEqual(names(await list(`${ids}&_accessType=MANAGED_ACCESS`)), ['M-agent', 'M-off']);
    assert.deepEqual(names(await list(`${ids}&_isActive=false`)), ['M-off']);
    assert.deepEqual(names(await list(`${ids}&_isActive=true&_accessType=MANAGED_ACCESS`)), ['M-agent']);
    assert.deepEqual(names(await list(`${ids}&type=agent`)), ['M-agent']);
    assert.deepEqual(await list(`${ids}&_isDefault=true`), []);
    const defaults = await list('_isDefault=true');
    assert.equal(defaults.length, 1);
    assert.equal(defaults[0].isDefault, true);
    assert.ok((await list('_isDefault=false')).every((x) => x.isDefault === false));
    assert.deepEqual(await list('ids=not-a-uuid'), [], 'an id that names nothing matches nothing');
    assert.ok((await list('')).length >= 4, 'no filter: every application');
  });

  test('bad input: unknown accessType, type, frontendStack, a filter value out of its list: 400, nothing created', async () => {
    const count = async () =>
      (await t.db.query<{ n: number }>('SELECT count(*)::int AS n FROM applications')).rows[0].n;
    const before = await count();
    for (const [field, value] of [
      ['accessType', 'OPEN'],
      ['type', 'desktop'],
      ['frontendStack', 'cobol'],
      ['logoURL', 'x'.repeat(4096)],
      ['name', ''],
    ] as const) {
      const r = await create({ name: 'Bad', [field]: value });
      assert.equal(r.status, 400, `${field}: ${JSON.stringify(r.body)}`);
      assert.equal(r.body.errorCode, 'GH-10001');
      assert.match(r.body.errors[0], new RegExp(`body\\.${field}`));
    }
    assert.match(
      (await create({ name: 'Bad', type: 'desktop' })).body.errors[0],
      /must be one of web, mobile-ios, mobile-android, agent, other/,
    );
    assert.equal(await count(), before);
    for (const q of ['_accessType=OPEN', '_isDefault=maybe', '_isActive=2', 'type=desktop']) {
      const r = await t.call('GET', `${A}?${q}`, { token: vendor });
      assert.equal(r.status, 400, `${q}: ${JSON.stringify(r.body)}`);
      assert.match(r.body.errors[0], new RegExp(`querystring\\.${q.split('=')[0]}`));
    }
    const tooMany = Array.from({ length: 201 }, () => '00000000-0000-4000-8000-000000000000').join(',');
    const r = await t.call('GET', `${A}?ids=${tooMany}`, { token: vendor });
    assert.equal(r.status, 400);
    assert.match(r.body.errors[0], /ids/);
    assert.equal((await t.call('GET', A)).status, 401);
  });
});

describe('migrate vendor users in bulk (v2): the v1 bulk operation under the v2 path', () => {
  const V2 = '/identity/resources/migrations/v2/local/bulk';
  test('202 {migrationId}; the users land as with v1; the status route reads it', async () => {
    const r = await t.call('POST', V2, {
      token: vendor,
      body: {
        users: [
          { email: 'v2-a@bulk2.test', tenantId: 'um-1', username: 'v2.a' },
          { email: 'v2-b@bulk2.test', tenantId: 'nope' },
        ],
      },
    });
    assert.equal(r.status, 202, JSON.stringify(r.body));
    assert.deepEqual(Object.keys(r.body), ['migrationId']);
    const s = await waitFor(t, r.body.migrationId, (x) => x.state === 'completed');
    assert.deepEqual([s.total, s.succeeded, s.failed], [2, 1, 1]);
    assert.deepEqual(
      s.errors.map((e: any) => [e.index, e.email, e.code]),
      [[1, 'v2-b@bulk2.test', 'GH-30001']],
    );
    const { rows } = await t.db.query<any>(
      `SELECT u.username, ut.tenant_id FROM users u JOIN user_tenants ut ON ut.user_id = u.id WHERE u.email = 'v2-a@bulk2.test'`,
    );
    assert.deepEqual(rows, [{ username: 'v2.a', tenant_id: 'um-1' }]);
  });

  test('bad input as v1: empty or oversized users, no body: 400; vendor token only', async () => {
    assert.equal((await t.call('POST', V2, { token: vendor, body: { users: [] } })).status, 400);
    const many = Array.from({ length: 1001 }, (_, i) => ({ email: `v2m${i}@x.test`, tenantId: 'um-1' }));
    assert.equal((await t.call('POST', V2, { token: vendor, body: { users: many } })).status, 400);
    const none = await t.call('POST', V2, { token: vendor, body: {} });
    assert.equal(none.status, 400);
    assert.match(none.body.errors[0], /users is required/);
    assert.equal(
      (await t.call('POST', V2, { body: { users: [{ email: 'x@x.test', tenantId: 'um-1' }] } })).status,
      401,
    );
    const user = await t.userToken({ tenantId: 'um-1', permissions: ['*'] });
    assert.equal(
      (await t.call('POST', V2, { token: user, body: { users: [{ email: 'x@x.test', tenantId: 'um-1' }] } })).status,
      403,
    );
  });
});
