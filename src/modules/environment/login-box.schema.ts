import { Type, type Static } from 'typebox';

const M2M = Type.Union([Type.Literal('ClientCredentials'), Type.Literal('AccessToken')]);
export type AuthStrategy = 'EmailAndPassword' | 'MagicLink' | 'Code' | 'SmsCode' | 'NoLocalAuthentication';

/** GET /identity/resources/configurations/v1/basic (vendor): VendorConfigBasicResponse of routes.md. */
export const VendorConfigBasic = Type.Object({ forcePermissions: Type.Boolean(), machineToMachineAuthStrategy: M2M });
export type VendorConfigBasic = Static<typeof VendorConfigBasic>;

/**
 * GET /identity/resources/configurations/v1/public (no token): what a login box may offer. A method that sends a
 * message is on only when the environment enables it, its message template is active and the channel can deliver.
 * Never a secret: no keys, client ids, provider settings or token lifetimes beyond what a user is told.
 */
export const PublicConfig = Type.Object({
  allowSignups: Type.Boolean({
    description: 'self-service sign-up (POST /identity/resources/users/v1/signUp) is open',
  }),
  allowNotVerifiedUsersLogin: Type.Boolean({
    description: 'always false: a signed-up user activates (verifies the email) before signing in',
  }),
  apiTokensEnabled: Type.Boolean(),
  forcePermissions: Type.Boolean(),
  machineToMachineAuthStrategy: M2M,
  authStrategy: Type.Union(
    [
      Type.Literal('EmailAndPassword'),
      Type.Literal('MagicLink'),
      Type.Literal('Code'),
      Type.Literal('SmsCode'),
      Type.Literal('NoLocalAuthentication'),
    ],
    { description: 'the main sign-in method: EmailAndPassword when on, else the first passwordless method on' },
  ),
  embeddedMode: Type.Boolean({ description: 'the login box runs inside the application (no hosted login)' }),
  loginBoxVisible: Type.Boolean(),
  signIn: Type.Object({
    password: Type.Boolean(),
    magicLink: Type.Boolean(),
    emailCode: Type.Boolean(),
    smsCode: Type.Boolean(),
    sso: Type.Boolean({
      description: 'an account has an enabled SAML/OIDC connection (pre-login routes by email domain)',
    }),
    socialProviders: Type.Array(Type.String(), { description: 'active social login providers, by type' }),
  }),
  mfa: Type.Object(
    { authenticationApp: Type.Boolean(), sms: Type.Boolean(), email: Type.Boolean() },
    { description: 'second factors users may enroll and use' },
  ),
  delivery: Type.Object(
    { email: Type.Boolean(), sms: Type.Boolean() },
    {
      description:
        'whether email / SMS messages can be delivered (a provider is configured, or the development outbox is on)',
    },
  ),
  captcha: Type.Object({
    enabled: Type.Boolean(),
    siteKey: Type.Optional(
      Type.String({ description: 'the public reCAPTCHA site key, when a captcha policy is enabled' }),
    ),
  }),
});
export type PublicConfig = Static<typeof PublicConfig>;

const RecoveryMethod = (strategy: 'link' | 'code') =>
  Type.Object({
    active: Type.Boolean(),
    strategy: Type.Literal(strategy),
    expiresInMinutes: Type.Integer(),
  });

/** GET /identity/resources/configurations/v1/password-recovery/strategies (no token). */
export const RecoveryStrategies = Type.Object({
  email: RecoveryMethod('link'),
  sms: RecoveryMethod('code'),
  strategies: Type.Array(Type.Union([Type.Literal('email'), Type.Literal('sms')]), {
    description: 'the active methods, email first',
  }),
});
export type RecoveryStrategies = Static<typeof RecoveryStrategies>;
