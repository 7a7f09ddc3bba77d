import { Type, type Static } from 'typebox';
import { POLICY_LIMITS } from './policy.ts';

const Length = (description: string) => Type.Integer({ minimum: 1, maximum: POLICY_LIMITS.maxLength, description });
const Flag = (description: string) => Type.Boolean({ description });

const optionalTestFields = {
  requireLowercase: Type.Optional(Flag('the password must contain a lower-case letter')),
  requireUppercase: Type.Optional(Flag('the password must contain an upper-case letter')),
  requireNumbers: Type.Optional(Flag('the password must contain a digit')),
  requireSpecialChars: Type.Optional(
    Flag('the password must contain a character that is neither a letter nor a digit'),
  ),
};

/**
 * POST body of the password configuration: any subset; what is left out keeps its current value (the scope's own
 * policy, else the inherited one). The character-class flags go under `optionalTests` (or top-level). Unknown fields
 * are dropped.
 */
export const PasswordConfigBody = Type.Object(
  {
    allowPassphrases: Type.Optional(
      Flag('passwords of minPhraseLength characters or more skip the character-class rules'),
    ),
    maxLength: Type.Optional(Length(`longest password, at most ${POLICY_LIMITS.maxLength} characters`)),
    minLength: Type.Optional(Length('shortest password')),
    minPhraseLength: Type.Optional(Length('length from which a password counts as a passphrase')),
    minOptionalTestsToPass: Type.Optional(
      Type.Integer({
        minimum: 0,
        maximum: POLICY_LIMITS.optionalTests,
        description: 'how many of the four character classes a password must contain (0-4)',
      }),
    ),
    blockPwnedPasswords: Type.Optional(Flag('reject the 10,000 most common passwords')),
    optionalTests: Type.Optional(Type.Object(optionalTestFields, { additionalProperties: false })),
    ...optionalTestFields,
  },
  { additionalProperties: false },
);
export type PasswordConfigBody = Static<typeof PasswordConfigBody>;

export const PasswordConfig = Type.Object({
  allowPassphrases: Type.Boolean(),
  maxLength: Type.Integer(),
  minLength: Type.Integer(),
  minPhraseLength: Type.Integer(),
  minOptionalTestsToPass: Type.Integer(),
  blockPwnedPasswords: Type.Boolean(),
  optionalTests: Type.Object({
    requireLowercase: Type.Boolean(),
    requireUppercase: Type.Boolean(),
    requireNumbers: Type.Boolean(),
    requireSpecialChars: Type.Boolean(),
  }),
  requiredTests: Type.Object({
    minLength: Type.Integer(),
    maxLength: Type.Integer(),
    blockPwnedPasswords: Type.Boolean(),
    rejectEmail: Type.Boolean({ description: 'a password may not contain the email address or its name part' }),
  }),
});
export type PasswordConfig = Static<typeof PasswordConfig>;

const HistorySize = Type.Integer({
  minimum: POLICY_LIMITS.historySize.min,
  maximum: POLICY_LIMITS.historySize.max,
  description: 'how many previous passwords may not be reused (1-24)',
});
export const CreateHistoryPolicy = Type.Object(
  { enabled: Type.Boolean(), historySize: HistorySize },
  { additionalProperties: false },
);
export type CreateHistoryPolicy = Static<typeof CreateHistoryPolicy>;
export const UpdateHistoryPolicy = Type.Object(
  { enabled: Type.Optional(Type.Boolean()), historySize: Type.Optional(HistorySize) },
  { additionalProperties: false },
);
export type UpdateHistoryPolicy = Static<typeof UpdateHistoryPolicy>;

const Scope = Type.Union([Type.String(), Type.Null()], {
  description: 'the account the policy belongs to; null for the environment-level policy',
});
const Timestamp = Type.String({ format: 'date-time' });

export const HistoryPolicy = Type.Object({
  id: Type.String(),
  tenantId: Scope,
  enabled: Type.Boolean(),
  historySize: Type.Integer(),
  createdAt: Timestamp,
  updatedAt: Timestamp,
});
export type HistoryPolicy = Static<typeof HistoryPolicy>;

const MaxAttempts = Type.Integer({
  minimum: POLICY_LIMITS.maxAttempts.min,
  maximum: POLICY_LIMITS.maxAttempts.max,
  description: 'failed sign-ins in a row that lock the user (1-100)',
});
const LockDuration = Type.Union(
  [
    Type.Integer({ minimum: POLICY_LIMITS.lockDurationMinutes.min, maximum: POLICY_LIMITS.lockDurationMinutes.max }),
    Type.Null(),
  ],
  { description: 'minutes a lock lasts (1-43200); null: until the user is unlocked or resets the password' },
);
export const CreateLockoutPolicy = Type.Object(
  { enabled: Type.Boolean(), maxAttempts: MaxAttempts, lockDurationMinutes: Type.Optional(LockDuration) },
  { additionalProperties: false },
);
export type CreateLockoutPolicy = Static<typeof CreateLockoutPolicy>;
export const UpdateLockoutPolicy = Type.Object(
  {
    enabled: Type.Optional(Type.Boolean()),
    maxAttempts: Type.Optional(MaxAttempts),
    lockDurationMinutes: Type.Optional(LockDuration),
  },
  { additionalProperties: false },
);
export type UpdateLockoutPolicy = Static<typeof UpdateLockoutPolicy>;

export const LockoutPolicy = Type.Object({
  id: Type.String(),
  tenantId: Scope,
  enabled: Type.Boolean(),
  maxAttempts: Type.Integer(),
  lockDurationMinutes: Type.Union([Type.Integer(), Type.Null()]),
  createdAt: Timestamp,
  updatedAt: Timestamp,
});
export type LockoutPolicy = Static<typeof LockoutPolicy>;

export const PolicyHeaders = Type.Object({
  'gatehouse-tenant-id': Type.Optional(
    Type.String({
      description:
        'the account (alias: frontegg-tenant-id); environment tokens only: without it the environment-level policy; a user token always acts on its own account',
    }),
  ),
});

export const UserPasswordConfigQuery = Type.Object({
  userId: Type.Optional(
    Type.String({ maxLength: 255, description: 'the user whose strictest configuration is wanted' }),
  ),
});

// ---- password rotation (expiry) and the user emails policy ----

export const ROTATION_LIMITS = { minPeriod: 60, maxPeriod: 315_360_000 } as const;
const Seconds = (min: number, description: string) =>
  Type.Integer({ minimum: min, maximum: ROTATION_LIMITS.maxPeriod, description });

/** POST body of the rotation policy: any subset; what is left out keeps its current (else inherited, else default) value. */
export const RotationPolicyBody = Type.Object(
  {
    isActive: Type.Optional(Flag('passwords expire rotationPeriod seconds after they were set')),
    rotationPeriod: Type.Optional(
      Seconds(
        ROTATION_LIMITS.minPeriod,
        `seconds a password lasts (${ROTATION_LIMITS.minPeriod}-${ROTATION_LIMITS.maxPeriod}; 7776000 is 90 days)`,
      ),
    ),
    notificationPeriod: Type.Optional(
      Seconds(
        0,
        'seconds before expiry from which a sign-in answer carries passwordExpiresIn (0: no notice; at most rotationPeriod)',
      ),
    ),
  },
  { additionalProperties: false },
);
export type RotationPolicyBody = Static<typeof RotationPolicyBody>;

export const RotationPolicy = Type.Object({
  id: Type.String(),
  tenantId: Scope,
  isActive: Type.Boolean(),
  rotationPeriod: Type.Integer({ description: 'seconds' }),
  notificationPeriod: Type.Integer({ description: 'seconds' }),
  createdAt: Timestamp,
  updatedAt: Timestamp,
});
export type RotationPolicy = Static<typeof RotationPolicy>;

export const UserEmailsPolicyBody = Type.Object(
  {
    allowEmailChange: Type.Optional(
      Flag('users may change their own email address (POST /identity/resources/users/v1/email/me)'),
    ),
  },
  { additionalProperties: false },
);
export type UserEmailsPolicyBody = Static<typeof UserEmailsPolicyBody>;

export const UserEmailsPolicy = Type.Object({ allowEmailChange: Type.Boolean() });
export type UserEmailsPolicy = Static<typeof UserEmailsPolicy>;
