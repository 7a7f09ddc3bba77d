export {
  createPasswordService,
  DEFAULT_LOCKOUT,
  type PasswordService,
  type PasswordServiceDeps,
  type Scope,
  type ValidateContext,
  type VerifyResult,
  type EffectiveLockout,
} from './service.ts';
export {
  securityPolicyRoutes,
  READ_PERMISSION as SECURITY_POLICY_READ,
  WRITE_PERMISSION as SECURITY_POLICY_WRITE,
} from './routes.ts';
export { DEFAULT_PASSWORD_POLICY, POLICY_LIMITS, checkPassword, type PasswordPolicy } from './policy.ts';
export {
  HASHERS,
  hasherFor,
  importerFor,
  IMPORT_TYPES,
  PBKDF2_ENCODINGS,
  argon2NeedsRehash,
  ARGON2_PARAMETERS,
  type Hasher,
  type ImportSpec,
  type ImportType,
} from './hashers/index.ts';
export { commonPasswords, isCommonPassword } from './common-passwords.ts';
export { PasswordConfig, HistoryPolicy, LockoutPolicy } from './schema.ts';
export { assertEmailChangeAllowed, getUserEmailsPolicy, DEFAULT_ALLOW_EMAIL_CHANGE } from './emails-policy.ts';
export {
  DEFAULT_ROTATION,
  ROTATION_POLICY_CACHE_MS,
  type EffectiveRotation,
  type RotationStatus,
  type RotationPolicies,
} from './rotation.ts';
