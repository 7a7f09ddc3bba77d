import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startTestApp, type TestApp } from '../helpers/harness.ts';
import { account } from '../fixtures/builders.ts';

/**
 * What login boxes read before sign-in: the public configuration, the sign-up and password-recovery strategies
 * (no token), and the vendor's basic configuration. The development outbox is off here, so a channel delivers only
 * once its provider is configured.
 */
let t: TestApp;
let vendor: string;
const C = '/identity/resources/configurations/v1';
const SMTP_SECRET = 'smtp-password-never-shown-123';
const SMS_SECRET = 'sms-token-never-shown-456';
const SOCIAL_SECRET = 'social-secret-never-shown-789';
const SSO_SECRET = 'sso-client-secret-never-shown-0123';

const get = (url: string, token?: string) => t.call('GET', url, { token });
async function vendorCall(method: string, url: string, body?: unknown, headers: Record<string, string> = {}) {
  const r = await t.call(method, url, { token: vendor, body, headers });
  assert.ok(r.status >= 200 && r.status < 300, `${method} ${url}: ${r.status} ${JSON.stringify(r.body)}`);
  return r.body;
}
async function pub() {
  const r = await get(`${C}/public`);
  assert.equal(r.status, 200, JSON.stringify(r.body));
  return r.body;
}

before(async () => {
  t = await startTestApp({ MESSAGING_DEV_OUTBOX: 'false', OUTBOUND_ALLOW_PRIVATE_NETWORKS: 'true' });
  vendor = await t.vendorToken();
});
after(async () => t?.close());

describe('login box configuration', () => {
  test('defaults, without a token: password sign-in only, nothing that needs a message while nothing delivers', async () => {
    assert.deepEqual(await pub(), {
      allowSignups: false,
      allowNotVerifiedUsersLogin: false,
      apiTokensEnabled: true,
      forcePermissions: false,
      machineToMachineAuthStrategy: 'ClientCredentials',
      authStrategy: 'EmailAndPassword',
      embeddedMode: true,
      loginBoxVisible: true,
      // SMS sign-in is enabled by default, but no SMS provider is configured: not offered.
      signIn: { password: true, magicLink: false, emailCode: false, smsCode: false, sso: false, socialProviders: [] },
      mfa: { authenticationApp: true, sms: false, email: false },
      delivery: { email: false, sms: false },
      captcha: { enabled: false },
    });
    assert.deepEqual((await get(`${C}/sign-up/strategies`)).body, {
      allowSignUp: false,
      strategies: [],
      fields: {
        email: 'required',
        name: 'optional',
        username: 'optional',
        password: 'optional',
        phoneNumber: 'optional',
        companyName: 'optional',
      },
      emailVerificationRequired: true,
      activation: { strategy: 'link', expiresInMinutes: 1440, deliverable: false },
    });
    assert.deepEqual((await get(`${C}/password-recovery/strategies`)).body, {
      email: { active: false, strategy: 'link', expiresInMinutes: 60 },
      sms: { active: false, strategy: 'code', expiresInMinutes: 10 },
      strategies: [],
    });
  });

  test('the answers follow the environment: sign-up, providers, methods, SSO, social, MFA factors; never a secret', async () => {
    await vendorCall('POST', C, { allowSignups: true, forcePermissions: true });
    await vendorCall('POST', '/identity/resources/mail/v1/configurations', {
      host: '127.0.0.1',
      port: 2525,
      senderEmail: 'no-reply@gatehouse.test',
      username: 'mailer',
      password: SMTP_SECRET,
    });
    const afterMail = await pub();
    assert.deepEqual(afterMail.delivery, { email: true, sms: false });
    assert.deepEqual(afterMail.mfa, { authenticationApp: true, sms: false, email: false });
    await vendorCall('POST', `${C}/sms`, {
      provider: 'twilio',
      accountId: 'AC0123456789',
      token: SMS_SECRET,
      senderName: '+15550001111',
      baseUrl: 'http://127.0.0.1:9',
    });
    await vendorCall('POST', `${C}/auth/strategies`, { MagicLink: { active: true }, Code: { active: true } });
    await vendorCall('POST', `${C}/mfa`, {
      email: { active: true, tokenLifetimeSeconds: 300, sender: 'mfa@gatehouse.test' },
    });
    await vendorCall('POST', '/identity/resources/sso/v2', {
      type: 'github',
      clientId: 'gh-client',
      secret: SOCIAL_SECRET,
      redirectUrl: 'http://localhost:3000/cb',
      active: true,
    });
    await vendorCall('POST', '/identity/resources/sso/v2', {
      type: 'google',
      clientId: 'g-client',
      secret: SOCIAL_SECRET,
      redirectUrl: 'http://localhost:3000/cb',
      active: false,
    });
    await account(t, { id: 'pc-globex', name: 'Globex' });
    await vendorCall(
      'POST',
      '/team/resources/sso/v1/configurations',
      {
        type: 'oidc',
        enabled: true,
        oidcClientId: 'globex-sso',
        oidcSecret: SSO_SECRET,
        configMetadata: { issuer: 'http://127.0.0.1:9' },
      },
      { 'gatehouse-tenant-id': 'pc-globex' },
    );

    const r = await get(`/frontegg${C}/public`);
    assert.equal(r.status, 200);
    assert.equal(r.body.allowSignups, true);
    assert.equal(r.body.forcePermissions, true);
    assert.deepEqual(r.body.signIn, {
      password: true,
      magicLink: true,
      emailCode: true,
      smsCode: true,
      sso: true,
      socialProviders: ['github'],
    });
    assert.deepEqual(r.body.mfa, { authenticationApp: true, sms: true, email: true });
    assert.deepEqual(r.body.delivery, { email: true, sms: true });
    const raw = JSON.stringify(r.body);
    for (const secret of [SMTP_SECRET, SMS_SECRET, SOCIAL_SECRET, SSO_SECRET, 'gh-client', 'AC0123456789', 'mailer'])
      assert.ok(!raw.includes(secret), secret);

    // Password sign-in off: the main strategy becomes the first passwordless method on.
    await vendorCall('POST', `${C}/auth/strategies`, { EmailAndPassword: { active: false } });
    assert.equal((await pub()).authStrategy, 'MagicLink');
    await vendorCall('POST', `${C}/auth/strategies`, {
      MagicLink: { active: false },
      Code: { active: false },
      SmsCode: { active: false },
    });
    assert.equal((await pub()).authStrategy, 'NoLocalAuthentication');
    await vendorCall('POST', `${C}/auth/strategies`, { EmailAndPassword: { active: true } });
    assert.equal((await pub()).authStrategy, 'EmailAndPassword');

    // A disabled SSO connection is no SSO sign-in.
    const [conn] = await vendorCall('GET', '/team/resources/sso/v1/configurations', undefined, {
      'gatehouse-tenant-id': 'pc-globex',
    });
    await vendorCall(
      'PATCH',
      `/team/resources/sso/v1/configurations/${conn.id}`,
      { enabled: false },
      { 'gatehouse-tenant-id': 'pc-globex' },
    );
    assert.equal((await pub()).signIn.sso, false);
  });

  test('sign-up strategies: allowed, activation strategy and whether its email can go out', async () => {
    await vendorCall('POST', `${C}/activation/strategies`, { strategy: 'code', codeExpiration: 30 });
    const r = await get(`${C}/sign-up/strategies`);
    assert.equal(r.status, 200);
    assert.equal(r.body.allowSignUp, true);
    assert.deepEqual(r.body.strategies, ['email']);
    assert.deepEqual(r.body.activation, { strategy: 'code', expiresInMinutes: 30, deliverable: true });
    // An inactive ActivateUser template sends nothing: not deliverable.
    await vendorCall('POST', '/identity/resources/mail/v1/configs/templates', { type: 'ActivateUser', active: false });
    assert.equal((await get(`${C}/sign-up/strategies`)).body.activation.deliverable, false);
    await vendorCall('POST', C, { allowSignups: false });
    const closed = await get(`${C}/sign-up/strategies`);
    assert.equal(closed.body.allowSignUp, false);
    assert.deepEqual(closed.body.strategies, []);
  });

  test('password-recovery strategies: email link and SMS code, each on while its message can go out', async () => {
    assert.deepEqual((await get(`${C}/password-recovery/strategies`)).body, {
      email: { active: true, strategy: 'link', expiresInMinutes: 60 },
      sms: { active: true, strategy: 'code', expiresInMinutes: 10 },
      strategies: ['email', 'sms'],
    });
    await vendorCall('POST', `${C}/sms/templates/ResetPassword`, { active: false });
    assert.deepEqual((await get(`${C}/password-recovery/strategies`)).body.strategies, ['email']);
    await vendorCall('DELETE', '/identity/resources/mail/v1/configurations');
    const none = await get(`${C}/password-recovery/strategies`);
    assert.deepEqual(none.body.strategies, []);
    assert.equal(none.body.email.active, false);
    assert.deepEqual((await pub()).delivery, { email: false, sms: true });
  });

  test('a sent token does not matter to the public routes, even a user token or a bad one', async () => {
    const user = await t.userToken({ tenantId: 'pc-globex' });
    for (const path of ['public', 'sign-up/strategies', 'password-recovery/strategies']) {
      assert.equal((await get(`${C}/${path}`, user)).status, 200);
      assert.equal((await get(`${C}/${path}`, 'not-a-jwt')).status, 200);
    }
  });
});

describe('basic configuration (vendor)', () => {
  test('forcePermissions and the machine-to-machine strategy, as set on the identity configuration', async () => {
    await vendorCall('POST', C, { forcePermissions: false, machineToMachineAuthStrategy: 'ClientCredentials' });
    assert.deepEqual((await get(`${C}/basic`, vendor)).body, {
      forcePermissions: false,
      machineToMachineAuthStrategy: 'ClientCredentials',
    });
    await vendorCall('POST', C, { forcePermissions: true, machineToMachineAuthStrategy: 'AccessToken' });
    const r = await get(`${C}/basic`, vendor);
    assert.equal(r.status, 200);
    assert.deepEqual(r.body, { forcePermissions: true, machineToMachineAuthStrategy: 'AccessToken' });
  });

  test('a user token is refused (403), no token is a 401', async () => {
    const user = await t.userToken({ tenantId: 'pc-globex', permissions: ['*'] });
    const r = await get(`${C}/basic`, user);
    assert.equal(r.status, 403);
    assert.equal(r.body.errorCode, 'GH-20003');
    const none = await get(`${C}/basic`);
    assert.equal(none.status, 401);
    assert.equal(none.body.errorCode, 'GH-20001');
  });
});
