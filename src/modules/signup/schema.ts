import { Type, type Static } from 'typebox';

const Str = (max: number) => Type.Optional(Type.String({ maxLength: max }));
const PROVIDERS = ['local', 'saml', 'google', 'github', 'facebook', 'microsoft', 'scim2', 'slack', 'apple'] as const;

export const SignUpBody = Type.Object({
  provider: Type.Union(PROVIDERS.map((p) => Type.Literal(p))),
  email: Type.String({ format: 'email', maxLength: 320 }),
  username: Type.Optional(Type.String({ pattern: '^[A-Za-z0-9._@+-]{1,128}$' })),
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
  roleIds: Type.Optional(Type.Array(Type.String({ maxLength: 64 }), {
    maxItems: 100, uniqueItems: true,
    description: 'only default roles (isDefault) may be named; they are added to the roles the sign-up gives (first-user roles of the new account, or the invite token\'s); any other role is a 400',
  })),
});
export type SignUpBody = Static<typeof SignUpBody>;

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
export const ActivateBody = Type.Object({ userId: Uid, token: Token, password: Password, recaptchaToken: Str(4096), lastTermsCheck: Str(64) });
export const ActivateCodeBody = Type.Object({ userId: Uid, code: Type.String({ minLength: 1, maxLength: 16 }), token: Type.Optional(Token), password: Password, recaptchaToken: Str(4096), lastTermsCheck: Str(64) });
export const StrategyQuery = Type.Object({ userId: Uid, token: Token });
export const ResendBody = Type.Object({ email: Type.String({ minLength: 1, maxLength: 320 }), emailMetadata: Type.Optional(Type.Object({}, { additionalProperties: true })) });

export const Strategy = Type.Object({ strategy: Type.Union([Type.Literal('link'), Type.Literal('code')]), codeExpiration: Type.Integer({ description: 'minutes' }) });
export const StrategyBody = Type.Object({
  strategy: Type.Optional(Type.Union([Type.Literal('link'), Type.Literal('code')])),
  codeExpiration: Type.Optional(Type.Integer({ minimum: 1, maximum: 43200, description: 'minutes' })),
}, { minProperties: 1 });
