import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startTestApp, type TestApp } from '../helpers/harness.ts';
import { smsCode, startSmsServer, type SmsServer } from '../helpers/sms-server.ts';
import { account, signedIn, user } from '../fixtures/builders.ts';

let t: TestApp;
let vendor: string;
let sms: SmsServer;
const P = '/identity/resources/users/phone-numbers';
const users: Record<string, { id: string; token: string }> = {};

const smsTo = (phone: string, count = 0) => sms.waitFor((m) => m.to === phone && sms.to(phone).indexOf(m) >= count);
const wrong = (code: string) => (code === '000000' ? '111111' : '000000');

before(async () => {
  t = await startTestApp({ CODE_RATE_LIMIT_PER_IP: '1000', CODE_RATE_LIMIT_PER_IDENTIFIER: '4' });
  vendor = await t.vendorToken();
  sms = await startSmsServer();
  await sms.configure(t);
  for (const tenantId of ['ph-a', 'ph-b']) {
    await account(t, { id: tenantId });
  }
  for (const [name, tenantId] of [
    ['ada', 'ph-a'],
    ['bob', 'ph-a'],
    ['cy', 'ph-b'],
  ]) {
    const s = await signedIn(t, await user(t, tenantId, { email: `${name}@ph.test` }));
    users[name] = { id: s.userId, token: s.accessToken };
  }
});
after(async () => {
  await t?.close();
  await sms?.close();
});

describe('adding a number with verification', () => {
  test('the texted code adds the number verified; the code works once; the User record shows it', async () => {
    const r = await t.call('POST', `${P}/v1`, {
      token: users.ada.token,
      body: { phoneNumber: '+14155550101', verify: true },
    });
    assert.equal(r.status, 201, JSON.stringify(r.body));
    assert.ok(r.body.otcToken);
    assert.equal(r.body.id, undefined, 'nothing is stored before the code is proven');
    assert.deepEqual((await t.call('GET', `${P}/v1/me`, { token: users.ada.token })).body, []);
    const code = smsCode(await smsTo('+14155550101'));

    const bad = await t.call('POST', `${P}/v1/verify`, {
      token: users.ada.token,
      body: { otcToken: r.body.otcToken, code: wrong(code) },
    });
    assert.equal(bad.status, 400);
    assert.equal(bad.body.errorCode, 'GH-61012');
    const ok = await t.call('POST', `${P}/v1/verify`, {
      token: users.ada.token,
      body: { otcToken: r.body.otcToken, code },
    });
    assert.equal(ok.status, 200, JSON.stringify(ok.body));
    assert.equal(ok.body.phoneNumber, '+14155550101');
    assert.equal(ok.body.verified, true);
    assert.equal(ok.body.userId, users.ada.id);
    const again = await t.call('POST', `${P}/v1/verify`, {
      token: users.ada.token,
      body: { otcToken: r.body.otcToken, code },
    });
    assert.equal(again.status, 410);
    assert.equal(again.body.errorCode, 'GH-61013');

    const me = await t.call('GET', `${P}/v1/me`, { token: users.ada.token });
    assert.deepEqual(
      me.body.map((p: { phoneNumber: string }) => p.phoneNumber),
      ['+14155550101'],
    );
    const rec = await t.call('GET', `/identity/resources/vendor-only/users/v1/${users.ada.id}`, { token: vendor });
    assert.equal(rec.body.phoneNumber, '+14155550101');
    const { rows } = await t.db.query<{ code_hash: string }>('SELECT code_hash FROM phone_codes WHERE id = $1', [
      r.body.otcToken,
    ]);
    assert.notEqual(rows[0].code_hash, code, 'codes are stored as HMACs');
    assert.ok(!rows[0].code_hash.includes(code));
  });

  test("another user's otcToken, a taken number, an expired code and five wrong codes are refused", async () => {
    const taken = await t.call('POST', `${P}/v1`, { token: users.bob.token, body: { phoneNumber: '+14155550101' } });
    assert.equal(taken.status, 409);
    assert.equal(taken.body.errorCode, 'GH-42004');

    const r = await t.call('POST', `${P}/v1/preverify`, {
      token: users.bob.token,
      body: { phoneNumber: '+14155550102' },
    });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    const code = smsCode(await smsTo('+14155550102'));
    const stolen = await t.call('POST', `${P}/v1/verify`, {
      token: users.ada.token,
      body: { otcToken: r.body.otcToken, code },
    });
    assert.equal(stolen.status, 400, "ada cannot redeem bob's code");

    await t.db.query("UPDATE phone_codes SET expires_at = now() - interval '1 second' WHERE id = $1", [
      r.body.otcToken,
    ]);
    const late = await t.call('POST', `${P}/v1/verify`, {
      token: users.bob.token,
      body: { otcToken: r.body.otcToken, code },
    });
    assert.equal(late.status, 410);
    assert.match(late.body.errors[0], /expired/);

    const r2 = await t.call('POST', `${P}/v1/preverify`, {
      token: users.bob.token,
      body: { phoneNumber: '+14155550102' },
    });
    const code2 = smsCode(await smsTo('+14155550102', 1));
    for (let i = 0; i < 4; i++) {
      assert.equal(
        (
          await t.call('POST', `${P}/v1/verify`, {
            token: users.bob.token,
            body: { otcToken: r2.body.otcToken, code: wrong(code2) },
          })
        ).status,
        400,
      );
    }
    const fifth = await t.call('POST', `${P}/v1/verify`, {
      token: users.bob.token,
      body: { otcToken: r2.body.otcToken, code: wrong(code2) },
    });
    assert.equal(fifth.status, 429);
    assert.equal(fifth.body.errorCode, 'GH-61014');
    const burned = await t.call('POST', `${P}/v1/verify`, {
      token: users.bob.token,
      body: { otcToken: r2.body.otcToken, code: code2 },
    });
    assert.equal(burned.status, 410, 'the right code no longer works once burned');
  });

  test('a newer code replaces the older one; too many code requests for one number are 429', async () => {
    const first = await t.call('POST', `${P}/v1/preverify`, {
      token: users.cy.token,
      body: { phoneNumber: '+14155550103' },
    });
    const c1 = smsCode(await smsTo('+14155550103'));
    const second = await t.call('POST', `${P}/v1/preverify`, {
      token: users.cy.token,
      body: { phoneNumber: '+14155550103' },
    });
    assert.equal(second.status, 200);
    await smsTo('+14155550103', 1);
    const old = await t.call('POST', `${P}/v1/verify`, {
      token: users.cy.token,
      body: { otcToken: first.body.otcToken, code: c1 },
    });
    assert.equal(old.status, 410);
    await t.call('POST', `${P}/v1/preverify`, { token: users.cy.token, body: { phoneNumber: '+14155550103' } });
    await t.call('POST', `${P}/v1/preverify`, { token: users.cy.token, body: { phoneNumber: '+14155550103' } });
    const limited = await t.call('POST', `${P}/v1/preverify`, {
      token: users.cy.token,
      body: { phoneNumber: '+14155550103' },
    });
    assert.equal(limited.status, 429);
    assert.equal(limited.body.errorCode, 'GH-10006');
    assert.ok(limited.headers['retry-after']);
  });
});

describe('numbers without verification, removal and the vendor routes', () => {
  test('verify:false adds an unverified number, removed at once; a verified one needs the ResetPhoneNumber code', async () => {
    const add = await t.call('POST', `${P}/v1`, {
      token: users.ada.token,
      body: { phoneNumber: '+14155550111', verify: false },
    });
    assert.equal(add.status, 201, JSON.stringify(add.body));
    assert.equal(add.body.verified, false);
    const del = await t.call('DELETE', `${P}/v1/${add.body.id}`, { token: users.ada.token });
    assert.equal(del.status, 200, JSON.stringify(del.body));
    assert.equal(del.body.deleted, true);

    const mine = (await t.call('GET', `${P}/v1/me`, { token: users.ada.token })).body;
    const verified = mine.find((p: { phoneNumber: string }) => p.phoneNumber === '+14155550101');
    const other = await t.call('DELETE', `${P}/v1/${verified.id}`, { token: users.bob.token });
    assert.equal(other.status, 404, "bob cannot remove ada's number");
    assert.equal(other.body.errorCode, 'GH-61020');
    const req = await t.call('DELETE', `${P}/v1/${verified.id}`, { token: users.ada.token });
    assert.equal(req.status, 200);
    assert.equal(req.body.deleted, false);
    const m = await smsTo('+14155550101', 1);
    const code = smsCode(m);
    const bad = await t.call('POST', `${P}/v1/${verified.id}/delete/verify`, {
      token: users.ada.token,
      body: { otcToken: req.body.otcToken, code: wrong(code) },
    });
    assert.equal(bad.status, 400);
    assert.equal(
      (await t.call('GET', `${P}/v1/me`, { token: users.ada.token })).body.length,
      1,
      'a wrong code removes nothing',
    );
    const ok = await t.call('POST', `${P}/v1/${verified.id}/delete/verify`, {
      token: users.ada.token,
      body: { otcToken: req.body.otcToken, code },
    });
    assert.equal(ok.status, 200, JSON.stringify(ok.body));
    assert.deepEqual((await t.call('GET', `${P}/v1/me`, { token: users.ada.token })).body, []);
    const { rows } = await t.db.query<{ type: string }>(
      "SELECT type FROM message_deliveries WHERE recipient = '+14155550101' ORDER BY created_at",
    );
    assert.deepEqual(
      rows.map((r) => r.type),
      ['VerifyPhoneNumber', 'ResetPhoneNumber'],
    );
  });

  test('the vendor adds verified numbers, lists with paging, sort and filter, and removes without a code', async () => {
    for (const [u, phone] of [
      ['ada', '+14155550203'],
      ['bob', '+14155550201'],
      ['cy', '+14155550202'],
    ] as const) {
      const r = await t.call('POST', `${P}/v1/vendor/${users[u].id}`, { token: vendor, body: { phoneNumber: phone } });
      assert.equal(r.status, 201, JSON.stringify(r.body));
      assert.equal(r.body.verified, true);
    }
    const page = await t.call('GET', `${P}/v1?_phoneNumber=41555502&_limit=2&_sortBy=phoneNumber&_order=DESC`, {
      token: vendor,
    });
    assert.equal(page.status, 200, JSON.stringify(page.body));
    assert.deepEqual(
      page.body.items.map((p: { phoneNumber: string }) => p.phoneNumber),
      ['+14155550203', '+14155550202'],
    );
    assert.equal(page.body._metadata.totalItems, 3);
    assert.equal(page.body._metadata.totalPages, 2);
    assert.match(page.body._links.next, /_offset=1/);
    const next = await t.call(
      'GET',
      `${P}/v1?_phoneNumber=41555502&_limit=2&_sortBy=phoneNumber&_order=DESC&_offset=1`,
      { token: vendor },
    );
    assert.deepEqual(
      next.body.items.map((p: { phoneNumber: string }) => p.phoneNumber),
      ['+14155550201'],
    );

    const v2 = await t.call('GET', `${P}/v2?userIds=${users.bob.id}&userIds=${users.cy.id}&_phoneNumber=41555502`, {
      token: vendor,
    });
    assert.equal(v2.status, 200, JSON.stringify(v2.body));
    assert.deepEqual(v2.body.items.map((p: { userId: string }) => p.userId).sort(), [users.bob.id, users.cy.id].sort());
    // An account admin's user token sees only the numbers of its account's users.
    const admin = await t.userToken({ sub: users.ada.id, tenantId: 'ph-a', permissions: ['fe.secure.read.users'] });
    const scoped = await t.call('GET', `${P}/v1?_phoneNumber=41555502`, { token: admin });
    assert.equal(scoped.status, 200, JSON.stringify(scoped.body));
    assert.deepEqual(
      scoped.body.items.map((p: { phoneNumber: string }) => p.phoneNumber),
      ['+14155550201', '+14155550203'],
    );
    const plain = await t.userToken({ sub: users.ada.id, tenantId: 'ph-a' });
    assert.equal((await t.call('GET', `${P}/v1`, { token: plain })).status, 403);

    const me = await t.call('GET', `${P}/v1/me`, { token: vendor, headers: { 'gatehouse-user-id': users.cy.id } });
    assert.equal(me.status, 200);
    const id = me.body.find((p: { phoneNumber: string }) => p.phoneNumber === '+14155550202').id;
    assert.equal(
      (await t.call('GET', `${P}/v1/me`, { token: vendor })).status,
      400,
      'an environment token names the user',
    );
    assert.equal(
      (await t.call('DELETE', `${P}/v1/vendor/${users.bob.id}/${id}`, { token: vendor })).status,
      404,
      "the number is not bob's",
    );
    assert.equal((await t.call('DELETE', `${P}/v1/vendor/${users.cy.id}/${id}`, { token: vendor })).status, 200);
    assert.equal(
      (await t.call('GET', `${P}/v1?_phoneNumber=41555502`, { token: vendor })).body._metadata.totalItems,
      2,
    );
  });

  test('bad input is a 400 naming the field and changes nothing', async () => {
    const r = await t.call('POST', `${P}/v1`, { token: users.bob.token, body: { phoneNumber: '415 555 0101' } });
    assert.equal(r.status, 400);
    assert.match(JSON.stringify(r.body.errors), /phoneNumber/);
    const v = await t.call('POST', `${P}/v1/verify`, {
      token: users.bob.token,
      body: { otcToken: 'not-a-token', code: '123456' },
    });
    assert.equal(v.status, 400);
    const missing = await t.call('POST', `${P}/v1/vendor/00000000-0000-4000-8000-000000000000`, {
      token: vendor,
      body: { phoneNumber: '+14155550999' },
    });
    assert.equal(missing.status, 404);
  });
});
