import { Type } from 'typebox';

/** base64url without padding (WebAuthn's JSON encoding of binary fields). */
const B64 = (maxLength: number, description: string) =>
  Type.String({ minLength: 1, maxLength, pattern: '^[A-Za-z0-9_-]+$', description: `${description} (base64url)` });
const Token = (description: string) => Type.String({ minLength: 1, maxLength: 512, description });

export const DeviceType = Type.Union([Type.Literal('Platform'), Type.Literal('CrossPlatform')]);
export const DeviceParams = Type.Object({
  deviceId: Type.String({ format: 'uuid', description: 'a WebAuthn device id' }),
});

const CredentialId = B64(1024, 'the credential id');
const ClientData = B64(4096, 'clientDataJSON');

/** The answer of navigator.credentials.create(). */
export const NewCredential = Type.Object({
  id: CredentialId,
  response: Type.Object({
    clientDataJSON: ClientData,
    attestationObject: B64(32768, 'the attestation object'),
    transports: Type.Optional(Type.Array(Type.String({ maxLength: 32 }), { maxItems: 8 })),
  }),
  deviceType: Type.Optional(DeviceType),
  authenticatorAttachment: Type.Optional(Type.String({ maxLength: 32 })),
  name: Type.Optional(Type.String({ maxLength: 100, description: 'a label for the device' })),
});

/** The answer of navigator.credentials.get(). */
export const Assertion = Type.Object({
  id: CredentialId,
  response: Type.Object({
    clientDataJSON: ClientData,
    authenticatorData: B64(4096, 'authenticatorData'),
    signature: B64(1024, 'the signature'),
    userHandle: Type.Optional(Type.Union([Type.String({ maxLength: 256, pattern: '^[A-Za-z0-9_-]*$' }), Type.Null()])),
  }),
});

export const LoginEnrollBody = Type.Object({ mfaToken: Token('the mfaToken of the pending sign-in') });
export const LoginEnrollVerifyBody = Type.Object({
  deviceType: DeviceType,
  webauthnToken: Token('the webauthnToken of the options'),
  options: NewCredential,
  mfaToken: Token('the mfaToken of the pending sign-in'),
  rememberDevice: Type.Optional(Type.Boolean()),
});
export const LoginVerifyBody = Type.Object({
  webauthnToken: Token('the webauthnToken of the options'),
  options: Assertion,
  mfaToken: Token('the mfaToken of the pending sign-in'),
  rememberDevice: Type.Optional(Type.Boolean()),
});
export const EnrollVerifyBody = Type.Object({
  deviceType: DeviceType,
  webauthnToken: Token('the webauthnToken of the options'),
  options: NewCredential,
});
export const DisableVerifyBody = Type.Optional(
  Type.Object({
    webauthnToken: Type.Optional(Token('the webauthnToken of the options')),
    options: Type.Optional(Assertion),
  }),
);
export const PreloginBody = Type.Optional(
  Type.Object({
    email: Type.Optional(Type.String({ maxLength: 320 })),
    userId: Type.Optional(Type.String({ maxLength: 64 })),
    recaptchaToken: Type.Optional(Type.String()),
  }),
);
export const PostloginBody = Type.Object({
  ...Assertion.properties,
  recaptchaToken: Type.Optional(Type.String()),
  invitationToken: Type.Optional(Type.String()),
});

const Open = Type.Object({}, { additionalProperties: true });
const Descriptor = Type.Object({
  id: Type.String(),
  type: Type.String(),
  transports: Type.Optional(Type.Array(Type.String())),
});
/** PublicKeyCredentialCreationOptionsJSON (for navigator.credentials.create()). */
export const CreationOptions = Type.Object(
  {
    rp: Type.Object({ name: Type.String(), id: Type.Optional(Type.String()) }),
    user: Type.Object({ id: Type.String(), name: Type.String(), displayName: Type.String() }),
    challenge: Type.String(),
    pubKeyCredParams: Type.Array(Type.Object({ type: Type.String(), alg: Type.Integer() })),
    timeout: Type.Optional(Type.Integer()),
    excludeCredentials: Type.Optional(Type.Array(Descriptor)),
    authenticatorSelection: Type.Optional(Open),
    attestation: Type.Optional(Type.String()),
    extensions: Type.Optional(Open),
    hints: Type.Optional(Type.Array(Type.String())),
  },
  { additionalProperties: true },
);
/** PublicKeyCredentialRequestOptionsJSON (for navigator.credentials.get()). */
export const RequestOptions = Type.Object(
  {
    challenge: Type.String(),
    allowCredentials: Type.Optional(Type.Array(Descriptor)),
    timeout: Type.Optional(Type.Integer()),
    rpId: Type.Optional(Type.String()),
    userVerification: Type.Optional(Type.String()),
    extensions: Type.Optional(Open),
  },
  { additionalProperties: true },
);
export const PreEnroll = Type.Object({ webauthnToken: Type.String(), options: CreationOptions });
export const PreVerify = Type.Object({ webauthnToken: Type.String(), options: RequestOptions });

export const Device = Type.Object({
  id: Type.String(),
  deviceType: DeviceType,
  name: Type.String(),
  createdAt: Type.String(),
  lastUsedAt: Type.Union([Type.String(), Type.Null()]),
});
export const Devices = Type.Object({ devices: Type.Array(Device) });
export const Enrolled = Type.Object({
  deviceId: Type.String(),
  recoveryCode: Type.String(),
  recoveryCodes: Type.Array(Type.String()),
});
export const Empty = Type.Object({});
