import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startTestApp, type TestApp } from '../helpers/harness.ts';
import { account } from '../fixtures/builders.ts';

let t: TestApp;
let vendor: string;
const C = '/directory/resources/v1/configurations/scim2';
const S = '/directory/resources/scim/v2.0';
const USER = 'urn:ietf:params:scim:schemas:core:2.0:User';
const ENT = 'urn:ietf:params:scim:schemas:extension:enterprise:2.0:User';
const PATCH = 'urn:ietf:params:scim:api:messages:2.0:PatchOp';
const ERROR = 'urn:ietf:params:scim:api:messages:2.0:Error';
let conn: { id: string; token: string };
let other: { id: string; token: string };
let base: string;

before(async () => {
  t = await startTestApp({ SCIM_MAX_RESULTS: '5', SCIM_BODY_LIMIT: '4096' });
  vendor = await t.vendorToken();
  for (const id of ['su-acme', 'su-beta']) await account(t, { id });
  conn = (
    await t.call('POST', C, {
      token: vendor,
      headers: { 'gatehouse-tenant-id': 'su-acme' },
      body: { source: 'other', syncToUserManagement: true },
    })
  ).body;
  other = (
    await t.call('POST', C, {
      token: vendor,
      headers: { 'gatehouse-tenant-id': 'su-beta' },
      body: { source: 'other', syncToUserManagement: true },
    })
  ).body;
  base = `${S}/${conn.id}`;
});
after(async () => t?.close());

async function sc(
  method: string,
  url: string,
  body?: unknown,
  o: { token?: string; headers?: Record<string, string>; raw?: string } = {},
) {
  const res = await t.app.inject({
    method: method as 'GET',
    url,
    headers: {
      authorization: `Bearer ${o.token ?? conn.token}`,
      'content-type': 'application/scim+json',
      ...(o.headers ?? {}),
    },
    payload: o.raw ?? (body === undefined ? undefined : JSON.stringify(body)),
  });
  return { status: res.statusCode, body: res.body ? JSON.parse(res.body) : undefined, headers: res.headers };
}

const newUser = (userName: string, extra: Record<string, unknown> = {}) =>
  sc('POST', `${base}/Users`, { schemas: [USER], userName, ...extra });

function assertScimError(r: { status: number; body: any }, status: number, scimType?: string) {
  assert.equal(r.status, status, JSON.stringify(r.body));
  assert.deepEqual(r.body.schemas, [ERROR]);
  assert.equal(r.body.status, String(status));
  assert.equal(typeof r.body.detail, 'string');
  // RFC 7644 3.12 and nothing else: strict clients reject the platform's errors/errorCode beside them.
  assert.deepEqual(
    Object.keys(r.body).sort(),
    ['detail', 'schemas', 'status', ...(r.body.scimType ? ['scimType'] : [])].sort(),
  );
  if (scimType) assert.equal(r.body.scimType, scimType);
}

describe('SCIM discovery', () => {
  test('ServiceProviderConfig, ResourceTypes and Schemas answer in application/scim+json', async () => {
    const spc = await sc('GET', `${base}/ServiceProviderConfig`);
    assert.equal(spc.status, 200);
    assert.match(String(spc.headers['content-type']), /^application\/scim\+json/);
    assert.equal(spc.body.patch.supported, true);
    assert.equal(spc.body.filter.supported, true);
    assert.equal(spc.body.filter.maxResults, 5);
    assert.equal(spc.body.etag.supported, true);
    assert.equal(spc.body.sort.supported, true);
    assert.equal(spc.body.authenticationSchemes[0].type, 'oauthbearertoken');
    const rt = await sc('GET', `${base}/ResourceTypes`);
    assert.deepEqual(rt.body.Resources.map((r: any) => r.id).sort(), ['Group', 'User']);
    assert.equal(rt.body.Resources.find((r: any) => r.id === 'User').schemaExtensions[0].schema, ENT);
    const schemas = await sc('GET', `${base}/Schemas`);
    assert.deepEqual(
      schemas.body.Resources.map((r: any) => r.id).sort(),
      ['urn:ietf:params:scim:schemas:core:2.0:Group', USER, ENT].sort(),
    );
    const user = await sc('GET', `${base}/Schemas/${USER}`);
    const userName = user.body.attributes.find((a: any) => a.name === 'userName');
    assert.equal(userName.uniqueness, 'server');
    assert.equal(userName.caseExact, false);
    assert.equal((await sc('GET', `${base}/Schemas/urn:nope`)).status, 404);
  });

  test('wrong token, no token, unknown connection: 401 in the SCIM error body', async () => {
    assertScimError(await sc('GET', `${base}/Users`, undefined, { token: 'ghscim_wrong' }), 401);
    const none = await t.app.inject({ method: 'GET', url: `${base}/Users` });
    assert.equal(none.statusCode, 401);
    assertScimError(await sc('GET', `${S}/00000000-0000-4000-8000-000000000000/Users`), 401);
    // The other account's token does not open this connection.
    assertScimError(await sc('GET', `${base}/Users`, undefined, { token: other.token }), 401);
    assertScimError(await sc('GET', `${base}/Nope`), 404);
  });
});

describe('SCIM Users: create, read, replace, delete', () => {
  let id: string;
  test('POST creates (201, Location, ETag, meta); the user is a Gatehouse user managed by scim2', async () => {
    const r = await newUser('Bjensen@Example.com', {
      externalId: 'ext-1',
      name: { givenName: 'Barbara', familyName: 'Jensen' },
      emails: [
        { value: 'bjensen@example.com', type: 'work', primary: true },
        { value: 'babs@home.test', type: 'home' },
      ],
      phoneNumbers: [{ value: '+1-555-0100', type: 'work' }],
      title: 'Tour Guide',
      [ENT]: {
        employeeNumber: '701984',
        department: 'Tour Operations',
        manager: { value: '26118915-6090-4610-87e4-49d8ca9f808d' },
      },
      password: 't1meMa$heen',
    });
    assert.equal(r.status, 201, JSON.stringify(r.body));
    id = r.body.id;
    assert.match(String(r.headers['content-type']), /^application\/scim\+json/);
    assert.deepEqual(r.body.schemas, [USER, ENT]);
    assert.equal(r.body.userName, 'Bjensen@Example.com');
    assert.equal(r.body.active, true);
    assert.equal(r.body[ENT].department, 'Tour Operations');
    assert.equal(r.body.meta.resourceType, 'User');
    assert.equal(r.headers.location, r.body.meta.location);
    assert.ok(r.body.meta.location.endsWith(`/Users/${id}`));
    assert.equal(r.headers.etag, r.body.meta.version);
    assert.ok(!('password' in r.body), 'password is never returned');
    const users = await t.call('GET', '/identity/resources/users/v2?_email=bjensen@example.com', {
      token: vendor,
      headers: { 'gatehouse-tenant-id': 'su-acme' },
    });
    assert.equal(users.body.items.length, 1);
    assert.equal(users.body.items[0].managedBy, 'scim2');
    assert.equal(users.body.items[0].provider, 'scim2');
    assert.equal(users.body.items[0].name, 'Barbara Jensen');
    const ev = await t.db.query<{ data: any }>(
      `SELECT data FROM events WHERE event_key = 'scim.user_provisioned' AND data->>'scimUserId' = $1`,
      [id],
    );
    assert.equal(ev.rows.length, 1);
  });

  test('GET returns the resource with ETag; If-None-Match answers 304', async () => {
    const r = await sc('GET', `${base}/Users/${id}`);
    assert.equal(r.status, 200);
    assert.equal(r.body.id, id);
    assert.equal(r.body.emails.length, 2);
    const nm = await sc('GET', `${base}/Users/${id}`, undefined, {
      headers: { 'if-none-match': r.headers.etag as string },
    });
    assert.equal(nm.status, 304);
    assertScimError(await sc('GET', `${base}/Users/00000000-0000-4000-8000-000000000000`), 404);
    assertScimError(await sc('GET', `${base}/Users/not-a-uuid`), 404);
  });

  test('missing userName 400 invalidValue; duplicate userName (any case) 409 uniqueness', async () => {
    assertScimError(
      await sc('POST', `${base}/Users`, { schemas: [USER], name: { givenName: 'x' } }),
      400,
      'invalidValue',
    );
    assertScimError(await newUser('BJENSEN@example.com'), 409, 'uniqueness');
    assertScimError(await sc('POST', `${base}/Users`, undefined, { raw: '{"userName": ' }), 400, 'invalidSyntax');
  });

  test('application/json is accepted too; other media types are 415', async () => {
    const r = await sc(
      'POST',
      `${base}/Users`,
      { userName: 'json-client@example.com' },
      { headers: { 'content-type': 'application/json' } },
    );
    assert.equal(r.status, 201);
    assert.match(String(r.headers['content-type']), /^application\/scim\+json/);
    assertScimError(
      await sc('POST', `${base}/Users`, undefined, {
        raw: 'userName=x',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
      }),
      415,
    );
  });

  test('an oversized body is 413 in the SCIM error body', async () => {
    assertScimError(await newUser('big@example.com', { title: 'x'.repeat(5000) }), 413);
  });

  test('PUT replaces; a stale If-Match is 412 and changes nothing; a matching one works', async () => {
    const cur = await sc('GET', `${base}/Users/${id}`);
    const stale = 'W/"0"';
    assertScimError(
      await sc(
        'PUT',
        `${base}/Users/${id}`,
        { schemas: [USER], userName: 'bjensen@example.com', title: 'Boss' },
        { headers: { 'if-match': stale } },
      ),
      412,
    );
    assert.equal((await sc('GET', `${base}/Users/${id}`)).body.title, 'Tour Guide');
    const r = await sc(
      'PUT',
      `${base}/Users/${id}`,
      {
        schemas: [USER],
        userName: 'bjensen@example.com',
        name: { givenName: 'Babs', familyName: 'Jensen' },
        emails: [{ value: 'bjensen@example.com', primary: true }],
      },
      { headers: { 'if-match': cur.headers.etag as string } },
    );
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.equal(r.body.title, undefined, 'PUT clears what it does not send');
    assert.notEqual(r.body.meta.version, cur.body.meta.version);
    const u = await t.call('GET', '/identity/resources/users/v2?_email=bjensen@example.com', {
      token: vendor,
      headers: { 'gatehouse-tenant-id': 'su-acme' },
    });
    assert.equal(u.body.items[0].name, 'Babs Jensen');
  });

  test('DELETE removes the user (204), its Gatehouse membership, and emits scim.user_deprovisioned', async () => {
    const r = await newUser('gone@example.com');
    const d = await sc('DELETE', `${base}/Users/${r.body.id}`);
    assert.equal(d.status, 204);
    assertScimError(await sc('GET', `${base}/Users/${r.body.id}`), 404);
    const u = await t.call('GET', '/identity/resources/users/v2?_email=gone@example.com', {
      token: vendor,
      headers: { 'gatehouse-tenant-id': 'su-acme' },
    });
    assert.equal(u.body.items.length, 0);
    const ev = await t.db.query(
      `SELECT 1 FROM events WHERE event_key = 'scim.user_deprovisioned' AND data->>'scimUserId' = $1 AND data->>'reason' = 'deleted'`,
      [r.body.id],
    );
    assert.equal(ev.rows.length, 1);
    assertScimError(await sc('DELETE', `${base}/Users/${r.body.id}`), 404);
  });
});

describe('SCIM Users: PATCH', () => {
  let id: string;
  before(async () => {
    const r = await newUser('patchy@example.com', {
      name: { givenName: 'Pat', familyName: 'Chy' },
      emails: [
        { value: 'patchy@example.com', type: 'work', primary: true },
        { value: 'p@home.test', type: 'home' },
      ],
    });
    id = r.body.id;
  });
  const patch = (ops: unknown[], headers?: Record<string, string>) =>
    sc('PATCH', `${base}/Users/${id}`, { schemas: [PATCH], Operations: ops }, { headers });

  test('replace with a path, add, remove', async () => {
    let r = await patch([
      { op: 'replace', path: 'name.givenName', value: 'Patricia' },
      { op: 'add', path: 'title', value: 'Engineer' },
      { op: 'add', path: 'nickName', value: 'P' },
    ]);
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.equal(r.body.name.givenName, 'Patricia');
    assert.equal(r.body.title, 'Engineer');
    r = await patch([{ op: 'remove', path: 'nickName' }]);
    assert.equal(r.body.nickName, undefined);
  });

  test('value filters in paths: emails[type eq "work"].value, remove emails[type eq "home"]', async () => {
    let r = await patch([{ op: 'replace', path: 'emails[type eq "work"].value', value: 'patricia@example.com' }]);
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.equal(r.body.emails.find((e: any) => e.type === 'work').value, 'patricia@example.com');
    r = await patch([{ op: 'remove', path: 'emails[type eq "home"]' }]);
    assert.deepEqual(
      r.body.emails.map((e: any) => e.type),
      ['work'],
    );
    // The filter's value compares case-insensitively (type is caseExact false).
    r = await patch([{ op: 'replace', path: 'emails[type eq "WORK"].display', value: 'Work mail' }]);
    assert.equal(r.body.emails[0].display, 'Work mail');
    // The Gatehouse user's email follows the primary email.
    const u = await t.call('GET', '/identity/resources/users/v2?_email=patricia@example.com', {
      token: vendor,
      headers: { 'gatehouse-tenant-id': 'su-acme' },
    });
    assert.equal(u.body.items.length, 1);
  });

  test('without a path: attributes, dotted keys and the enterprise extension', async () => {
    const r = await patch([
      {
        op: 'replace',
        value: {
          displayName: 'Pat C',
          'name.familyName': 'Chyx',
          [`${ENT}:department`]: 'R&D',
          [ENT]: { costCenter: '42' },
        },
      },
    ]);
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.equal(r.body.displayName, 'Pat C');
    assert.equal(r.body.name.familyName, 'Chyx');
    assert.equal(r.body[ENT].department, 'R&D');
    assert.equal(r.body[ENT].costCenter, '42');
    assert.deepEqual(r.body.schemas, [USER, ENT]);
  });

  test('bad PATCH: unknown op 400 invalidSyntax, unknown path 400 invalidPath, read-only 400 mutability, no target', async () => {
    assertScimError(await patch([{ op: 'move', path: 'title', value: 'x' }]), 400, 'invalidSyntax');
    assertScimError(
      await sc('PATCH', `${base}/Users/${id}`, { Operations: [{ op: 'add', path: 'title', value: 'x' }] }),
      400,
      'invalidSyntax',
    );
    assertScimError(await patch([]), 400, 'invalidSyntax');
    assertScimError(await patch([{ op: 'replace', path: 'favouriteColour', value: 'blue' }]), 400, 'invalidPath');
    assertScimError(await patch([{ op: 'replace', path: 'name.nickname', value: 'x' }]), 400, 'invalidPath');
    assertScimError(await patch([{ op: 'replace', path: 'emails[type eq ].value', value: 'x' }]), 400, 'invalidPath');
    assertScimError(await patch([{ op: 'replace', path: 'id', value: 'x' }]), 400, 'mutability');
    assertScimError(await patch([{ op: 'remove' }]), 400, 'noTarget');
    assertScimError(await patch([{ op: 'replace', path: 'active', value: 'maybe' }]), 400, 'invalidValue');
    assert.equal((await sc('GET', `${base}/Users/${id}`)).body.active, true, 'nothing changed');
  });

  test('If-Match on PATCH: stale 412, current works', async () => {
    const cur = await sc('GET', `${base}/Users/${id}`);
    assertScimError(await patch([{ op: 'replace', path: 'title', value: 'Stale' }], { 'if-match': 'W/"1"' }), 412);
    const ok = await patch([{ op: 'replace', path: 'title', value: 'Fresh' }], {
      'if-match': cur.headers.etag as string,
    });
    assert.equal(ok.status, 200);
    assert.equal(ok.body.title, 'Fresh');
  });

  test('active false deactivates: sign-in is disabled in the account and sessions end; true re-enables', async () => {
    const gh = (
      await t.call('GET', '/identity/resources/users/v2?_email=patricia@example.com', {
        token: vendor,
        headers: { 'gatehouse-tenant-id': 'su-acme' },
      })
    ).body.items[0];
    await t.db.query(
      `INSERT INTO sessions (id, tenant_id, user_id, amr, expires_at) VALUES (gen_random_uuid(), 'su-acme', $1, '{pwd}', now() + interval '1 day')`,
      [gh.id],
    );
    const r = await patch([{ op: 'replace', path: 'active', value: false }]);
    assert.equal(r.body.active, false);
    const after = await t.call('GET', `/identity/resources/users/v1/${gh.id}`, {
      token: vendor,
      headers: { 'gatehouse-tenant-id': 'su-acme' },
    });
    assert.equal(after.body.tenants.find((x: any) => x.tenantId === 'su-acme').isDisabled, true);
    const live = await t.db.query('SELECT 1 FROM sessions WHERE user_id = $1 AND revoked_at IS NULL', [gh.id]);
    assert.equal(live.rows.length, 0);
    const ev = await t.db.query(
      `SELECT 1 FROM events WHERE event_key = 'scim.user_deprovisioned' AND data->>'scimUserId' = $1 AND data->>'reason' = 'deactivated'`,
      [id],
    );
    assert.equal(ev.rows.length, 1);
    await patch([{ op: 'replace', path: 'active', value: true }]);
    const back = await t.call('GET', `/identity/resources/users/v1/${gh.id}`, {
      token: vendor,
      headers: { 'gatehouse-tenant-id': 'su-acme' },
    });
    assert.equal(back.body.tenants.find((x: any) => x.tenantId === 'su-acme').isDisabled, false);
  });
});

describe('SCIM Users: lists and filters', () => {
  before(async () => {
    const people = [
      ['alice@corp.test', 'Alice', 'Anders', 'Employee', 'Sales', true],
      ['bob@corp.test', 'Bob', 'Brown', 'Intern', 'Sales', true],
      ['carol@corp.test', 'Carol', "O'Malley", 'Employee', 'R&D', false],
      ['dave@other.test', 'Dave', 'Davis', 'Contractor', 'R&D', true],
    ] as const;
    for (const [userName, given, family, userType, dept, active] of people) {
      const r = await sc(
        'POST',
        `${S}/${other.id}/Users`,
        {
          schemas: [USER, ENT],
          userName,
          userType,
          active,
          name: { givenName: given, familyName: family },
          emails: [{ value: userName, type: 'work', primary: true }],
          [ENT]: { department: dept },
          ...(userName.startsWith('carol') ? { title: 'CFO' } : {}),
        },
        { token: other.token },
      );
      assert.equal(r.status, 201, JSON.stringify(r.body));
    }
  });
  const list = async (qs: string) => {
    const r = await sc('GET', `${S}/${other.id}/Users?${qs}`, undefined, { token: other.token });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    return r.body;
  };
  const names = async (filter: string) =>
    (await list(`filter=${encodeURIComponent(filter)}`)).Resources.map((r: any) => r.userName).sort();

  test('every operator, case rules per attribute, and/or/not and grouping', async () => {
    assert.deepEqual(await names('userName eq "ALICE@corp.test"'), ['alice@corp.test'], 'userName is caseExact false');
    assert.deepEqual(await names('userName ne "alice@corp.test"'), [
      'bob@corp.test',
      'carol@corp.test',
      'dave@other.test',
    ]);
    assert.deepEqual(await names('userName co "CORP"'), ['alice@corp.test', 'bob@corp.test', 'carol@corp.test']);
    assert.deepEqual(await names('userName sw "b"'), ['bob@corp.test']);
    assert.deepEqual(await names('userName ew "other.test"'), ['dave@other.test']);
    assert.deepEqual(await names('userName gt "bob@corp.test"'), ['carol@corp.test', 'dave@other.test']);
    assert.deepEqual(await names('userName ge "bob@corp.test"'), [
      'bob@corp.test',
      'carol@corp.test',
      'dave@other.test',
    ]);
    assert.deepEqual(await names('userName lt "bob@corp.test"'), ['alice@corp.test']);
    assert.deepEqual(await names('userName le "bob@corp.test"'), ['alice@corp.test', 'bob@corp.test']);
    assert.deepEqual(await names('title pr'), ['carol@corp.test']);
    assert.deepEqual(await names(`name.familyName co "O'Malley"`), ['carol@corp.test']);
    assert.deepEqual(await names('active eq false'), ['carol@corp.test']);
    assert.deepEqual(
      await names('active eq True'),
      ['alice@corp.test', 'bob@corp.test', 'dave@other.test'],
      'keywords are case-insensitive',
    );
    assert.deepEqual(await names('title pr and userType eq "Employee"'), ['carol@corp.test']);
    assert.deepEqual(await names('title pr or userType eq "Intern"'), ['bob@corp.test', 'carol@corp.test']);
    assert.deepEqual(
      await names('userType eq "Employee" and (emails co "corp.test" or emails.value co "other.test")'),
      ['alice@corp.test', 'carol@corp.test'],
    );
    assert.deepEqual(await names('userType ne "Employee" and not (emails co "other.test")'), ['bob@corp.test']);
    assert.deepEqual(await names('userType eq "Employee" and emails[type eq "work" and value co "@corp.test"]'), [
      'alice@corp.test',
      'carol@corp.test',
    ]);
    assert.deepEqual(await names('emails[type eq "home"]'), []);
    assert.deepEqual(await names(`${ENT}:department eq "r&d"`), ['carol@corp.test', 'dave@other.test']);
    assert.deepEqual(await names(`urn:ietf:params:scim:schemas:core:2.0:User:userName sw "A"`), ['alice@corp.test']);
    assert.deepEqual(await names(`schemas eq "${ENT}"`), [
      'alice@corp.test',
      'bob@corp.test',
      'carol@corp.test',
      'dave@other.test',
    ]);
    assert.deepEqual(await names('meta.lastModified gt "2011-05-13T04:42:34Z"'), [
      'alice@corp.test',
      'bob@corp.test',
      'carol@corp.test',
      'dave@other.test',
    ]);
    assert.deepEqual(await names('meta.created lt "2011-05-13T04:42:34Z"'), []);
    const ext = (await list(`filter=${encodeURIComponent('userName eq "alice@corp.test"')}`)).Resources[0];
    assert.deepEqual(await names(`id eq "${ext.id}"`), ['alice@corp.test']);
    assert.deepEqual(await names(`id eq "${ext.id.toUpperCase()}"`), [], 'id is caseExact');
  });

  test('malformed filters and unknown attributes: 400 invalidFilter', async () => {
    for (const f of [
      'userName eq',
      'userName xx "a"',
      '(userName eq "a"',
      'nope eq "x"',
      'active gt true',
      'name eq "x"',
      'password eq "x"',
      'meta.created gt "yesterday"',
    ]) {
      const r = await sc('GET', `${S}/${other.id}/Users?filter=${encodeURIComponent(f)}`, undefined, {
        token: other.token,
      });
      assertScimError(r, 400, 'invalidFilter');
    }
  });

  test('sortBy/sortOrder, startIndex/count (count above the maximum is clamped), totalResults', async () => {
    const asc = await list('sortBy=name.familyName&sortOrder=ascending');
    assert.deepEqual(
      asc.Resources.map((r: any) => r.name.familyName),
      ['Anders', 'Brown', 'Davis', "O'Malley"],
    );
    const desc = await list('sortBy=userName&sortOrder=descending');
    assert.equal(desc.Resources[0].userName, 'dave@other.test');
    const page = await list('sortBy=userName&startIndex=2&count=2');
    assert.equal(page.totalResults, 4);
    assert.equal(page.startIndex, 2);
    assert.equal(page.itemsPerPage, 2);
    assert.deepEqual(
      page.Resources.map((r: any) => r.userName),
      ['bob@corp.test', 'carol@corp.test'],
    );
    const zero = await list('count=0');
    assert.equal(zero.totalResults, 4);
    assert.equal(zero.Resources.length, 0);
    for (let i = 0; i < 3; i++)
      await sc('POST', `${S}/${other.id}/Users`, { userName: `extra${i}@corp.test` }, { token: other.token });
    const clamped = await list('count=1000');
    assert.equal(clamped.itemsPerPage, 5, 'clamped to SCIM_MAX_RESULTS');
    assert.equal(clamped.totalResults, 7);
    const beyond = await list('startIndex=100');
    assert.equal(beyond.totalResults, 7);
    assert.equal(beyond.Resources.length, 0);
    assertScimError(
      await sc('GET', `${S}/${other.id}/Users?count=abc`, undefined, { token: other.token }),
      400,
      'invalidValue',
    );
    assertScimError(
      await sc('GET', `${S}/${other.id}/Users?sortBy=nope`, undefined, { token: other.token }),
      400,
      'invalidPath',
    );
  });

  test('attributes and excludedAttributes', async () => {
    const only = await list(
      `filter=${encodeURIComponent('userName eq "alice@corp.test"')}&attributes=userName,name.givenName,${ENT}:department`,
    );
    assert.deepEqual(Object.keys(only.Resources[0]).sort(), [ENT, 'id', 'name', 'schemas', 'userName'].sort());
    assert.deepEqual(only.Resources[0].name, { givenName: 'Alice' });
    assert.deepEqual(only.Resources[0][ENT], { department: 'Sales' });
    const ex = await list(
      `filter=${encodeURIComponent('userName eq "alice@corp.test"')}&excludedAttributes=emails,meta,id`,
    );
    assert.equal(ex.Resources[0].emails, undefined);
    assert.equal(ex.Resources[0].meta, undefined);
    assert.ok(ex.Resources[0].id, 'id is always returned');
    const one = await sc('GET', `${S}/${other.id}/Users/${only.Resources[0].id}?attributes=userName`, undefined, {
      token: other.token,
    });
    assert.deepEqual(Object.keys(one.body).sort(), ['id', 'schemas', 'userName']);
  });

  test('POST /.search takes the same query in the body', async () => {
    const r = await sc(
      'POST',
      `${S}/${other.id}/Users/.search`,
      {
        schemas: ['urn:ietf:params:scim:api:messages:2.0:SearchRequest'],
        filter: 'userType eq "Employee"',
        attributes: ['userName'],
        sortBy: 'userName',
        startIndex: 1,
        count: 10,
      },
      { token: other.token },
    );
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.deepEqual(
      r.body.Resources.map((x: any) => x.userName),
      ['alice@corp.test', 'carol@corp.test'],
    );
    assertScimError(
      await sc('POST', `${S}/${other.id}/Users/.search`, { filter: 'userName eq' }, { token: other.token }),
      400,
      'invalidFilter',
    );
  });
});

describe('SCIM Users: isolation between accounts', () => {
  test("one account's connection can never read or change another account's users", async () => {
    const mine = await newUser('isolated@acme.test');
    const theirs = (await sc('GET', `${S}/${other.id}/Users?count=1`, undefined, { token: other.token })).body
      .Resources[0];
    // Through my connection, their user does not exist.
    assertScimError(await sc('GET', `${base}/Users/${theirs.id}`), 404);
    assertScimError(await sc('PUT', `${base}/Users/${theirs.id}`, { userName: 'hijack@x.test' }), 404);
    assertScimError(
      await sc('PATCH', `${base}/Users/${theirs.id}`, {
        schemas: [PATCH],
        Operations: [{ op: 'replace', path: 'active', value: false }],
      }),
      404,
    );
    assertScimError(await sc('DELETE', `${base}/Users/${theirs.id}`), 404);
    const filtered = await sc(
      'GET',
      `${base}/Users?filter=${encodeURIComponent(`id eq "${theirs.id}" or userName eq "${theirs.userName}"`)}`,
    );
    assert.equal(filtered.body.totalResults, 0);
    // My token on their connection id is refused.
    assertScimError(await sc('GET', `${S}/${other.id}/Users/${theirs.id}`), 401);
    // Their user is untouched.
    const still = await sc('GET', `${S}/${other.id}/Users/${theirs.id}`, undefined, { token: other.token });
    assert.equal(still.body.active, theirs.active);
    // An email that is a Gatehouse user elsewhere is linked, but its profile is not changed by this connection.
    const linked = await sc('POST', `${base}/Users`, { userName: 'alice@corp.test', name: { givenName: 'Mallory' } });
    assert.equal(linked.status, 201);
    const gh = await t.call('GET', '/identity/resources/users/v2?_email=alice@corp.test', {
      token: vendor,
      headers: { 'gatehouse-tenant-id': 'su-beta' },
    });
    assert.equal(gh.body.items[0].name, 'Alice Anders');
    assert.ok(mine.body.id);
  });
});
