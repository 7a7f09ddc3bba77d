import { Type, type Static } from 'typebox';

export const LoginBody = Type.Object({
  email: Type.Optional(Type.String({ maxLength: 320 })),
  username: Type.Optional(Type.String({ maxLength: 128 })),
  password: Type.String({ minLength: 1, maxLength: 1024 }),
  recaptchaToken: Type.Optional(Type.String()),
  invitationToken: Type.Optional(Type.String()),
});

/** Step-up: exactly one of the password and a current code of the user's authenticator app. */
export const StepUpBody = Type.Object({
  password: Type.Optional(Type.String({ minLength: 1, maxLength: 1024 })),
  code: Type.Optional(
    Type.String({ minLength: 1, maxLength: 32, description: 'a current code of the authenticator app' }),
  ),
});

export const RefreshBody = Type.Optional(Type.Object({ refreshToken: Type.Optional(Type.String({ maxLength: 512 })) }));

/** The MFA devices of a challenge (phones and emails masked). */
export const MfaDevices = Type.Object({
  webauthn: Type.Array(
    Type.Object({
      id: Type.String(),
      deviceType: Type.Optional(Type.Union([Type.Literal('Platform'), Type.Literal('CrossPlatform')])),
      name: Type.Optional(Type.String()),
    }),
  ),
  phones: Type.Array(Type.Object({ id: Type.String(), phoneNumber: Type.String() })),
  authenticators: Type.Array(Type.Object({ id: Type.String() })),
  emails: Type.Array(Type.Object({ email: Type.String() })),
});

/**
 * wire.md section 4, shared by every route that signs a user in (password, refresh, MFA verify, passwordless,
 * activation, invitation acceptance, SSO and social post-login): tokens, or a gate's challenge (MFA: `mfaRequired`
 * + `mfaToken` and the fields below, no tokens). A route whose response schema lacks these fields would strip the
 * challenge, so every sign-in route uses this one schema.
 */
export const LoginResponse = Type.Object({
  tokenType: Type.Optional(Type.String()),
  accessToken: Type.Optional(Type.String()),
  refreshToken: Type.Optional(Type.String()),
  expiresIn: Type.Optional(Type.Integer()),
  expires: Type.Optional(Type.String()),
  mfaRequired: Type.Boolean(),
  /** The reset flow: present (and no tokens) when the user must set a password before signing in. */
  resetPasswordToken: Type.Optional(Type.String()),
  /** Password rotation: with tokens, when the password expires within the notice period (seconds left, the period in seconds). */
  passwordExpiresIn: Type.Optional(Type.Integer()),
  notificationPeriod: Type.Optional(Type.Integer()),
  /** The MFA challenge (src/modules/mfa): present, with no tokens, when a second factor is needed. */
  mfaToken: Type.Optional(Type.String()),
  mfaEnrolled: Type.Optional(Type.Boolean()),
  mfaDevices: Type.Optional(MfaDevices),
  mfaStrategies: Type.Optional(Type.Array(Type.String())),
  allowRememberMyDevice: Type.Optional(Type.Boolean()),
  /** Shown once, when a sign-in enrols the first MFA factor. */
  recoveryCode: Type.Optional(Type.String()),
  recoveryCodes: Type.Optional(Type.Array(Type.String())),
  userId: Type.Optional(Type.String()),
  userEmail: Type.Optional(Type.String()),
  emailVerified: Type.Optional(Type.Boolean()),
});

/** The body of a sign-in answer (tokens, or a gate's challenge). */
export type SignInAnswerBody = Static<typeof LoginResponse>;

export const Session = Type.Object({
  id: Type.String(),
  userAgent: Type.Union([Type.String(), Type.Null()]),
  ipAddress: Type.Union([Type.String(), Type.Null()]),
  tenantId: Type.String(),
  createdAt: Type.String(),
  lastActiveAt: Type.String(),
  expiresAt: Type.String(),
  current: Type.Boolean(),
});

const Toggle = () =>
  Type.Object({
    isActive: Type.Boolean(),
    timeout: Type.Integer({ minimum: 1, maximum: 31536000, description: 'seconds' }),
  });

export const SessionPolicyBody = Type.Object(
  {
    sessionIdleTimeoutConfiguration: Type.Optional(Toggle()),
    sessionTimeoutConfiguration: Type.Optional(Toggle()),
    sessionConcurrentConfiguration: Type.Optional(
      Type.Object({ isActive: Type.Boolean(), maxSessions: Type.Integer({ minimum: 1, maximum: 1000 }) }),
    ),
  },
  { minProperties: 1 },
);

export const SessionPolicy = Type.Object({
  sessionIdleTimeoutConfiguration: Type.Object({ isActive: Type.Boolean(), timeout: Type.Integer() }),
  sessionTimeoutConfiguration: Type.Object({ isActive: Type.Boolean(), timeout: Type.Integer() }),
  sessionConcurrentConfiguration: Type.Object({ isActive: Type.Boolean(), maxSessions: Type.Integer() }),
});
