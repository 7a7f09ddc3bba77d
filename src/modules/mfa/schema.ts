import { Type } from 'typebox';
import { MfaDevices, SignInAnswer } from '../auth/index.ts';

const Code = (description: string) => Type.String({ minLength: 1, maxLength: 64, description });
const MfaToken = Type.String({ minLength: 1, maxLength: 512, description: 'the mfaToken of the sign-in answer' });
const OtcToken = Type.String({
  minLength: 1,
  maxLength: 512,
  description: 'the otcToken answered when the code was sent',
});
const Phone = Type.String({
  pattern: '^\\+[1-9][0-9-]{5,20}$',
  maxLength: 24,
  description: 'E.164-like: plus sign, then digits (hyphens allowed)',
});

export const EnforceType = Type.Union([
  Type.Literal('Off'),
  Type.Literal('DontForce'),
  Type.Literal('Force'),
  Type.Literal('ForceExceptSAML'),
]);

export const PolicyBody = Type.Object({
  enforceMFAType: Type.Optional(EnforceType),
  allowRememberMyDevice: Type.Optional(Type.Boolean()),
  mfaDeviceExpiration: Type.Optional(
    Type.Integer({
      minimum: 0,
      maximum: 31536000,
      description: 'seconds a remembered device skips MFA: 60 or more; 0 only with allowRememberMyDevice false',
    }),
  ),
});
export const Policy = Type.Object({
  id: Type.String(),
  tenantId: Type.Union([Type.String(), Type.Null()]),
  enforceMFAType: Type.String(),
  allowRememberMyDevice: Type.Boolean(),
  mfaDeviceExpiration: Type.Integer(),
  createdAt: Type.String(),
  updatedAt: Type.String(),
});

export const ConfigBody = Type.Object({
  authenticationApp: Type.Optional(
    Type.Object({ active: Type.Boolean(), serviceName: Type.String({ minLength: 1, maxLength: 64 }) }),
  ),
  sms: Type.Optional(
    Type.Object({ active: Type.Boolean(), tokenLifetimeSeconds: Type.Integer({ minimum: 30, maximum: 3600 }) }),
  ),
  email: Type.Optional(
    Type.Object({
      active: Type.Boolean(),
      tokenLifetimeSeconds: Type.Integer({ minimum: 30, maximum: 3600 }),
      sender: Type.String({ maxLength: 320 }),
    }),
  ),
});
export const Config = Type.Object({
  authenticationApp: Type.Object({ active: Type.Boolean(), serviceName: Type.String() }),
  sms: Type.Object({ active: Type.Boolean(), tokenLifetimeSeconds: Type.Integer() }),
  email: Type.Object({ active: Type.Boolean(), tokenLifetimeSeconds: Type.Integer(), sender: Type.String() }),
});
export const StrategyName = Type.Union(
  ['AuthenticatorApp', 'WebAuthnPlatform', 'WebAuthnCrossPlatform', 'SMS', 'EmailCode'].map((s) => Type.Literal(s)),
);
export const StrategyBody = Type.Object({ isActive: Type.Boolean(), strategy: StrategyName });
export const Strategies = Type.Object({
  strategies: Type.Array(Type.Object({ strategy: Type.String(), isActive: Type.Boolean() })),
});

export const Devices = MfaDevices;

/** wire.md section 4: tokens, or the MFA challenge (mfaRequired + mfaToken, no tokens); the schema every sign-in route shares. */
export const AuthResponse = SignInAnswer;

export const VerifyBody = Type.Object({
  value: Code('the 6-digit code of the authenticator app'),
  mfaToken: MfaToken,
  rememberDevice: Type.Optional(Type.Boolean()),
});
export const LoginEnrollBody = Type.Object({ mfaToken: MfaToken });
export const LoginEnrollVerifyBody = Type.Object({
  token: Code('the 6-digit code of the authenticator app'),
  mfaToken: MfaToken,
  rememberDevice: Type.Optional(Type.Boolean()),
});
export const RecoverBody = Type.Object({
  recoveryCode: Code('a recovery code'),
  email: Type.String({ minLength: 1, maxLength: 320 }),
});
export const CodeRequestBody = Type.Object({ mfaToken: MfaToken });
export const CodeVerifyBody = Type.Object({
  otcToken: OtcToken,
  code: Code('the code that was sent'),
  mfaToken: MfaToken,
  rememberDevice: Type.Optional(Type.Boolean()),
});
export const LoginSmsEnrollBody = Type.Object({ phoneNumber: Phone, mfaToken: MfaToken });
export const LoginSmsEnrollVerifyBody = Type.Object({
  otcToken: OtcToken,
  code: Code('the code that was sent'),
  mfaToken: Type.Optional(MfaToken),
  rememberDevice: Type.Optional(Type.Boolean()),
});
export const OtcResponse = Type.Object({
  otcToken: Type.String(),
  phoneNumber: Type.Optional(Type.String()),
  email: Type.Optional(Type.String()),
});

export const Qr = Type.Object({
  qrCode: Type.String({ description: 'PNG data URL of the otpauth:// URI' }),
  uri: Type.String(),
  deviceId: Type.String(),
});
export const TokenBody = Type.Object({ token: Code('the 6-digit code of the authenticator app') });
export const OptionalTokenBody = Type.Optional(
  Type.Object({ token: Type.Optional(Code('the 6-digit code of the authenticator app')) }),
);
export const RecoveryCodes = Type.Object({
  recoveryCode: Type.String(),
  recoveryCodes: Type.Array(Type.String()),
  deviceId: Type.String(),
});
export const SmsEnrollBody = Type.Object({ phoneNumber: Phone });
export const OtcBody = Type.Object({ otcToken: OtcToken, code: Code('the code that was sent') });
export const SmsEnrolled = Type.Object({
  deviceId: Type.String(),
  recoveryCode: Type.Optional(Type.String()),
  recoveryCodes: Type.Optional(Type.Array(Type.String())),
});

// -- answers without a record --
export const Empty = Type.Object({}, { description: 'empty object' });
export const AllowRemember = Type.Object({
  allowRememberDevice: Type.Boolean(),
  allowRememberMyDevice: Type.Boolean({ description: 'same as allowRememberDevice (older clients read this name)' }),
  mfaDeviceExpiration: Type.Integer({ description: 'seconds a remembered device skips MFA' }),
});
