import { Type } from 'typebox';

const Str = (max: number) => Type.Optional(Type.String({ maxLength: max }));
const identifierFields = {
  email: Str(320),
  username: Str(128),
  userId: Str(64),
  phoneNumber: Type.Optional(
    Type.String({
      maxLength: 32,
      pattern: '^\\+[1-9](?:-?\\d){5,13}$',
      description: 'leading plus, country code, no spaces',
    }),
  ),
  recaptchaToken: Str(4096),
  invitationToken: Str(512),
};

/** Pre-login: who wants a link or code (email, username or userId; phoneNumber for SMS). */
export const PreloginBody = Type.Object(identifierFields);
/** Post-login: the link token or the code; for codes also the identifier given at pre-login. */
export const PostloginBody = Type.Object({ token: Type.String({ minLength: 1, maxLength: 512 }), ...identifierFields });
export const TypeParams = Type.Object({
  type: Type.Union([Type.Literal('magiclink'), Type.Literal('code'), Type.Literal('smscode')]),
});

const Method = Type.Object({ active: Type.Boolean(), expiresInMinutes: Type.Integer() });
export const AuthStrategies = Type.Object({
  EmailAndPassword: Type.Object({ active: Type.Boolean() }),
  MagicLink: Method,
  Code: Method,
  SmsCode: Method,
});
const MethodPatch = Type.Object(
  { active: Type.Optional(Type.Boolean()), expiresInMinutes: Type.Optional(Type.Integer({ minimum: 1, maximum: 60 })) },
  { minProperties: 1 },
);
export const AuthStrategiesPatch = Type.Object(
  {
    EmailAndPassword: Type.Optional(Type.Object({ active: Type.Boolean() })),
    MagicLink: Type.Optional(MethodPatch),
    Code: Type.Optional(MethodPatch),
    SmsCode: Type.Optional(MethodPatch),
  },
  { minProperties: 1 },
);
