import { Type, type Static } from 'typebox';
import { SignInAnswer } from '../auth/index.ts';
import { Username } from '../users/index.ts';

const Str = (max: number) => Type.Optional(Type.String({ maxLength: max }));
const PROVIDERS = ['local', 'saml', 'google', 'github', 'facebook', 'microsoft', 'scim2', 'slack', 'apple'] as const;

/** The fields both sign-ups take (by email, and by username alone). */
const common = {
  // The vendor's browser SDK (signUpUser, signUpUserWithUsername) sends no provider: "local" when absent.
  provider: Type.Optional(
    Type.Union(
      PROVIDERS.map((p) => Type.Literal(p)),
      { default: 'local' },
    ),
  ),
  name: Str(255),
  profilePictureUrl: Str(4095),
  password: Type.Optional(Type.String({ minLength: 1, maxLength: 1024 })),
  phoneNumber: Type.Optional(Type.String({ pattern: '^\\+[1-9](?:-?\\d){5,13}$' })),
  metadata: Type.Optional(Type.String({ maxLength: 65536, description: 'stringified JSON object' })),
  companyName: Str(255),
  skipInviteEmail: Type.Optional(Type.Boolean()),
  recaptchaToken: Str(4096),
  invitationToken: Str(512),
  emailMetadata: Type.Optional(Type.Object({}, { additionalProperties: true })),
  roleIds: Type.Optional(
    Type.Array(Type.String({ maxLength: 64 }), {
      maxItems: 100,
      uniqueItems: true,
      description:
        "only default roles (isDefault) may be named; they are added to the roles the sign-up gives (first-user roles of the new account, or the invite token's); any other role is a 400",
    }),
  ),
};
const SignUpCommon = Type.Object(common);
export type SignUpCommon = Static<typeof SignUpCommon>;

export const SignUpBody = Type.Object({
  ...common,
  email: Type.String({ format: 'email', maxLength: 320 }),
  username: Type.Optional(Username),
});
export type SignUpBody = Static<typeof SignUpBody>;

/** POST .../signUp/username: a user named by a username alone (no email); companyName names the new account. */
export const SignUpUsernameBody = Type.Object({
  ...common,
  username: Username,
  companyName: Type.String({ minLength: 1, maxLength: 255 }),
  password: Type.Optional(
    Type.String({
      minLength: 1,
      maxLength: 1024,
      description: 'required: a user without an email cannot set or reset a password by email later',
    }),
  ),
});
export type SignUpUsernameBody = Static<typeof SignUpUsernameBody>;

/**
 * SignUpResponseDto: the user is signed in at once (nothing to activate by email): `authResponse` is the login answer
 * of wire.md 4 (or the MFA challenge); without it, a sign-in gate refused and the user signs in by the usual route.
 */
export const SignUpUsernameResponse = Type.Object({
  shouldActivate: Type.Boolean(),
  userId: Type.String(),
  tenantId: Type.String(),
  authResponse: Type.Optional(SignInAnswer),
});

/** SignUpUserEmailDto: the new user's id, account and identity (never the password). */
export const SignUpResponse = Type.Object({
  shouldActivate: Type.Boolean(),
  userId: Type.String(),
  tenantId: Type.String(),
  provider: Type.Enum(PROVIDERS),
  email: Type.String(),
  username: Type.Optional(Type.String()),
  name: Type.Optional(Type.String()),
});

const Uid = Type.String({ minLength: 1, maxLength: 64 });
const Token = Type.String({ minLength: 1, maxLength: 512 });
const Password = Type.Optional(Type.String({ minLength: 1, maxLength: 1024 }));
export const ActivateBody = Type.Object({
  userId: Uid,
  token: Token,
  password: Password,
  recaptchaToken: Str(4096),
  lastTermsCheck: Str(64),
});
export const ActivateCodeBody = Type.Object({
  userId: Uid,
  code: Type.String({ minLength: 1, maxLength: 16 }),
  token: Type.Optional(Token),
  password: Password,
  recaptchaToken: Str(4096),
  lastTermsCheck: Str(64),
});
export const StrategyQuery = Type.Object({ userId: Uid, token: Token });
export const ResendBody = Type.Object({
  email: Type.String({ minLength: 1, maxLength: 320 }),
  emailMetadata: Type.Optional(Type.Object({}, { additionalProperties: true })),
});

export const Strategy = Type.Object({
  strategy: Type.Union([Type.Literal('link'), Type.Literal('code')]),
  codeExpiration: Type.Integer({ description: 'minutes' }),
});
export const StrategyBody = Type.Object(
  {
    strategy: Type.Optional(Type.Union([Type.Literal('link'), Type.Literal('code')])),
    codeExpiration: Type.Optional(Type.Integer({ minimum: 1, maximum: 43200, description: 'minutes' })),
  },
  { minProperties: 1 },
);
