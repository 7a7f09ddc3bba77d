import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import type { TestApp } from '../helpers/harness.ts';
import { linkIn, startAppWithMailbox, type Mailbox } from '../helpers/mailbox.ts';
import { user } from '../fixtures/builders.ts';

const U = '/identity/resources/users';
const BULK = `${U}/v1/passwords/breached/reset/bulk`;
const LOGIN = '/identity/resources/auth/v1/user';
const PASSWORD = 'Initial-Passw0rd-2024!';
const TENANT = 'br-acme';
const PWNED_SUBJECT = 'Your password must be changed';

let t: TestApp;
let vendor: string;
let mailbox: Mailbox;
let close: (() => Promise<void>) | undefined;

before(async () => {
  // One public reset request per identifier: the bulk route must not be held by that limit.
  ({ t, vendor, mailbox, close } = await startAppWithMailbox({ CODE_RATE_LIMIT_PER_IDENTIFIER: '1' }, TENANT));
});
after(async () => {
  await close?.();
});

const createUser = async (email: string) =>
  (await user(t, TENANT, { email, name: 'Test User', password: PASSWORD })).id;
const login = (email: string, password: string) => t.call('POST', LOGIN, { body: { email, password } });
const bulk = (body: unknown, token = vendor) => t.call('POST', BULK, { token, body });
const verifyReset = (body: Record<string, unknown>) => t.call('POST', `${U}/v1/passwords/reset/verify`, { body });
const mails = (email: string, subject: string) => mailbox.to(email).filter((m) => m.subject === subject);

describe('forced password reset after a breach', () => {
  test('voids links, disables the password, emails PwnedPassword, ends sessions; the emailed link completes the reset', async () => {
    const ada = await createUser('ada@br.test');
    await createUser('bob@br.test');
    const session = await login('ada@br.test', PASSWORD);
    assert.equal(session.status, 200, JSON.stringify(session.body));
    const bobSession = await login('bob@br.test', PASSWORD);
    assert.equal(bobSession.status, 200);

    // An earlier emailed link (and the per-identifier limit of the public request, now used up).
    assert.equal((await t.call('POST', `${U}/v1/passwords/reset`, { body: { email: 'ada@br.test' } })).status, 201);
    await mailbox.waitFor(() => mails('ada@br.test', 'Reset your password').length === 1);
    const oldUrl = linkIn(mails('ada@br.test', 'Reset your password')[0]);
    const oldLink = { userId: oldUrl.searchParams.get('userId')!, token: oldUrl.searchParams.get('token')! };
    assert.equal((await t.call('POST', `${U}/v1/passwords/reset`, { body: { email: 'ada@br.test' } })).status, 429);

    // A link the vendor generated to deliver by other means: also void after the breach.
    const vendorLink = await t.call('POST', `${U}/v1/${ada}/links/generate-password-reset-token`, { token: vendor });
    assert.equal(vendorLink.status, 201);

    const unknown = randomUUID();
    const r = await bulk({ userIds: [ada, unknown, ada.toUpperCase()] });
    assert.equal(r.status, 201, JSON.stringify(r.body));
    assert.deepEqual(r.body, { requested: 2, reset: [ada], notFound: [unknown], shared: [] });

    // The old link is void; the current password no longer signs in: the reset-required answer, no tokens.
    assert.equal((await t.call('POST', `${U}/v1/passwords/reset/validate`, { body: oldLink })).status, 410);
    assert.equal(
      (
        await t.call('POST', `${U}/v1/passwords/reset/validate`, {
          body: { userId: ada, token: vendorLink.body.token },
        })
      ).status,
      410,
    );
    const old = await login('ada@br.test', PASSWORD);
    assert.equal(old.status, 200, JSON.stringify(old.body));
    assert.match(old.body.resetPasswordToken, /^[A-Za-z0-9_-]{43}$/);
    assert.equal(old.body.accessToken, undefined);
    const refresh = await t.call('POST', `${LOGIN}/token/refresh`, {
      body: { refreshToken: session.body.refreshToken },
    });
    assert.equal(refresh.status, 401, 'the sessions from before are ended');
    // Another user is untouched.
    assert.equal(
      (await t.call('POST', `${LOGIN}/token/refresh`, { body: { refreshToken: bobSession.body.refreshToken } })).status,
      201,
    );
    assert.equal((await login('bob@br.test', PASSWORD)).status, 200);

    // The real PwnedPassword mail carries a working link.
    await mailbox.waitFor(() => mails('ada@br.test', PWNED_SUBJECT).length === 1);
    const mail = mails('ada@br.test', PWNED_SUBJECT)[0];
    assert.match(mail.text, /appeared in a known data breach/);
    const url = linkIn(mail);
    assert.equal(url.pathname, '/account/reset-password');
    assert.equal(url.searchParams.get('userId'), ada);
    const ok = await verifyReset({
      userId: ada,
      token: url.searchParams.get('token')!,
      password: 'Brand-New-Secret-77',
    });
    assert.equal(ok.status, 201, JSON.stringify(ok.body));
    assert.equal((await login('ada@br.test', PASSWORD)).status, 401);
    const fresh = await login('ada@br.test', 'Brand-New-Secret-77');
    assert.equal(fresh.status, 200);
    assert.ok(fresh.body.accessToken);
  });

  test('a user token without fe.secure.write.users is 403 and changes nothing', async () => {
    const cy = await createUser('cy@br.test');
    const reader = await t.userToken({ tenantId: TENANT, sub: cy, permissions: ['fe.secure.read.users'] });
    const r = await bulk({ userIds: [cy] }, reader);
    assert.equal(r.status, 403, JSON.stringify(r.body));
    assert.equal(r.body.errorCode, 'GH-20004');
    assert.ok((await login('cy@br.test', PASSWORD)).body.accessToken, 'the password still works');
    assert.equal(mails('cy@br.test', PWNED_SUBJECT).length, 0);
  });

  test('bad bodies are 400 naming the field; nothing changes', async () => {
    const dee = await createUser('dee@br.test');
    const bad: unknown[] = [
      {},
      { userIds: [] },
      { userIds: 'x' },
      { userIds: [dee, 'not-a-uuid'] },
      { userIds: [dee, ...Array.from({ length: 100 }, () => randomUUID())] },
    ];
    for (const body of bad) {
      const r = await bulk(body);
      assert.equal(r.status, 400, `${JSON.stringify(body).slice(0, 80)}: ${JSON.stringify(r.body)}`);
      assert.equal(r.body.errorCode, 'GH-10001');
      assert.match(JSON.stringify(r.body.errors), /userIds/);
    }
    assert.ok((await login('dee@br.test', PASSWORD)).body.accessToken, 'the password still works');
    assert.equal(mails('dee@br.test', PWNED_SUBJECT).length, 0);
  });
});
