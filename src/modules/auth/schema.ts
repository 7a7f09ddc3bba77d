import { Type } from 'typebox';

export const LoginBody = Type.Object({
  email: Type.Optional(Type.String({ maxLength: 320 })),
  username: Type.Optional(Type.String({ maxLength: 128 })),
  password: Type.String({ minLength: 1, maxLength: 1024 }),
  recaptchaToken: Type.Optional(Type.String()),
  invitationToken: Type.Optional(Type.String()),
});

export const RefreshBody = Type.Optional(Type.Object({ refreshToken: Type.Optional(Type.String({ maxLength: 512 })) }));

export const LoginResponse = Type.Object({
  tokenType: Type.Optional(Type.String()),
  accessToken: Type.Optional(Type.String()),
  refreshToken: Type.Optional(Type.String()),
  expiresIn: Type.Optional(Type.Integer()),
  expires: Type.Optional(Type.String()),
  mfaRequired: Type.Boolean(),
  /** The reset flow: present (and no tokens) when the user must set a password before signing in. */
  resetPasswordToken: Type.Optional(Type.String()),
  /** The MFA challenge (src/modules/mfa): present, with no tokens, when a second factor is needed. */
  mfaToken: Type.Optional(Type.String()),
  mfaEnrolled: Type.Optional(Type.Boolean()),
  mfaDevices: Type.Optional(Type.Object({}, { additionalProperties: true })),
  mfaStrategies: Type.Optional(Type.Array(Type.String())),
  allowRememberMyDevice: Type.Optional(Type.Boolean()),
  userId: Type.String(),
  userEmail: Type.String(),
  emailVerified: Type.Boolean(),
});

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

const Toggle = () => Type.Object({ isActive: Type.Boolean(), timeout: Type.Integer({ minimum: 1, maximum: 31536000, description: 'seconds' }) });

export const SessionPolicyBody = Type.Object({
  sessionIdleTimeoutConfiguration: Type.Optional(Toggle()),
  sessionTimeoutConfiguration: Type.Optional(Toggle()),
  sessionConcurrentConfiguration: Type.Optional(Type.Object({ isActive: Type.Boolean(), maxSessions: Type.Integer({ minimum: 1, maximum: 1000 }) })),
}, { minProperties: 1 });

export const SessionPolicy = Type.Object({
  sessionIdleTimeoutConfiguration: Type.Object({ isActive: Type.Boolean(), timeout: Type.Integer() }),
  sessionTimeoutConfiguration: Type.Object({ isActive: Type.Boolean(), timeout: Type.Integer() }),
  sessionConcurrentConfiguration: Type.Object({ isActive: Type.Boolean(), maxSessions: Type.Integer() }),
});
