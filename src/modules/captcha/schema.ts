import { Type, type Static } from 'typebox';

/** Site and secret keys: printable ASCII without spaces (reCAPTCHA keys are 40 characters; Turnstile's and hCaptcha's differ). */
const Key = (max: number, description: string) =>
  Type.String({ minLength: 1, maxLength: max, pattern: '^[\\x21-\\x7e]+$', description });

/** POST and PUT: the whole policy. On PUT an omitted ignoredEmails keeps the stored list (send [] to clear it). */
export const CaptchaPolicyBody = Type.Object({
  enabled: Type.Boolean({
    description:
      'when true, the public sign-in, sign-up, passwordless, password-reset and activation routes require body.recaptchaToken',
  }),
  siteKey: Key(256, 'the public site key login pages load the captcha widget with'),
  secretKey: Key(512, 'the secret key the server verifies tokens with (stored encrypted)'),
  minScore: Type.Number({
    minimum: 0,
    maximum: 1,
    description:
      'lowest accepted score (reCAPTCHA v3); a provider answer without a score (v2, Turnstile) passes on success',
  }),
  ignoredEmails: Type.Optional(
    Type.Array(Type.String({ minLength: 3, maxLength: 320 }), {
      maxItems: 1000,
      description:
        'exempt from the check: exact addresses (case-insensitive) and `*@domain` patterns (every address of exactly that domain)',
    }),
  ),
});
export type CaptchaPolicyBody = Static<typeof CaptchaPolicyBody>;

/** CaptchaPolicyResponse (routes.md): answered to environment tokens only, the secret included. */
export const CaptchaPolicy = Type.Object({
  id: Type.String(),
  siteKey: Type.String(),
  secretKey: Type.String(),
  enabled: Type.Boolean(),
  minScore: Type.Number(),
  ignoredEmails: Type.Array(Type.String()),
  createdAt: Type.String({ format: 'date-time' }),
  updatedAt: Type.String({ format: 'date-time' }),
});
export type CaptchaPolicy = Static<typeof CaptchaPolicy>;

/** What login pages need, without a token: never the secret, the score threshold or the exemptions. */
export const PublicCaptchaPolicy = Type.Object({
  enabled: Type.Boolean(),
  siteKey: Type.Optional(Type.String({ description: 'absent when no policy was ever set' })),
});
export type PublicCaptchaPolicy = Static<typeof PublicCaptchaPolicy>;
