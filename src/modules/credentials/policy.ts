/**
 * Password policy rules: the policy record, its built-in default, how a configuration body is merged into it and
 * checked, and how a password is checked against it. Pure functions; the service adds storage, the common-password
 * list and the history.
 */

export interface PasswordPolicy {
  minLength: number;
  maxLength: number;
  allowPassphrases: boolean;
  minPhraseLength: number;
  minOptionalTestsToPass: number;
  requireLowercase: boolean;
  requireUppercase: boolean;
  requireNumbers: boolean;
  requireSpecialChars: boolean;
  blockPwnedPasswords: boolean;
}

/** Limits of the configuration (the body schema enforces them too). */
export const POLICY_LIMITS = {
  /** Longest password any policy may allow, in code points. */
  maxLength: 128,
  optionalTests: 4,
  historySize: { min: 1, max: 24 },
  maxAttempts: { min: 1, max: 100 },
  /** 30 days. */
  lockDurationMinutes: { min: 1, max: 43_200 },
} as const;

/**
 * The built-in environment default (NIST SP 800-63B style): 8 to 128 characters, no composition rules, the common
 * password list on. Passphrases (20 characters and more) are exempt from composition rules once any are set.
 */
export const DEFAULT_PASSWORD_POLICY: Readonly<PasswordPolicy> = Object.freeze({
  minLength: 8,
  maxLength: 128,
  allowPassphrases: true,
  minPhraseLength: 20,
  minOptionalTestsToPass: 0,
  requireLowercase: false,
  requireUppercase: false,
  requireNumbers: false,
  requireSpecialChars: false,
  blockPwnedPasswords: true,
});

export const OPTIONAL_TESTS = [
  'requireLowercase',
  'requireUppercase',
  'requireNumbers',
  'requireSpecialChars',
] as const;
export type OptionalTest = (typeof OPTIONAL_TESTS)[number];

/** The configuration body: every field optional; the character-class flags nested under `optionalTests` or top-level. */
export interface PasswordConfigInput {
  allowPassphrases?: boolean;
  maxLength?: number;
  minLength?: number;
  minPhraseLength?: number;
  minOptionalTestsToPass?: number;
  blockPwnedPasswords?: boolean;
  optionalTests?: Partial<Record<OptionalTest, boolean>>;
  requireLowercase?: boolean;
  requireUppercase?: boolean;
  requireNumbers?: boolean;
  requireSpecialChars?: boolean;
}

export interface Problems {
  messages: string[];
  fields: string[];
}

const SCALARS = [
  'allowPassphrases',
  'maxLength',
  'minLength',
  'minPhraseLength',
  'minOptionalTestsToPass',
  'blockPwnedPasswords',
] as const;

/**
 * Applies a configuration body to a base policy. Returns the merged policy, whether the body set anything, and the
 * problems of the merged result (cross-field rules: the single-field ranges are the schema's).
 */
export function mergePolicy(
  base: Readonly<PasswordPolicy>,
  body: PasswordConfigInput,
): { policy: PasswordPolicy; changed: boolean; problems: Problems } {
  const policy: PasswordPolicy = { ...base };
  const problems: Problems = { messages: [], fields: [] };
  let changed = false;
  for (const k of SCALARS) {
    const v = body[k];
    if (v === undefined) continue;
    (policy as unknown as Record<string, unknown>)[k] = v;
    changed = true;
  }
  for (const k of OPTIONAL_TESTS) {
    const nested = body.optionalTests?.[k];
    const flat = body[k];
    if (nested !== undefined && flat !== undefined && nested !== flat) {
      problems.messages.push(`optionalTests.${k} and ${k} disagree; give the flag once`);
      problems.fields.push(k);
      continue;
    }
    const v = nested ?? flat;
    if (v === undefined) continue;
    policy[k] = v;
    changed = true;
  }
  const cross = policyProblems(policy);
  problems.messages.push(...cross.messages);
  problems.fields.push(...cross.fields);
  return { policy, changed, problems };
}

/** Rules between fields of a complete policy. */
export function policyProblems(p: PasswordPolicy): Problems {
  const messages: string[] = [];
  const fields: string[] = [];
  if (p.minLength > p.maxLength) {
    messages.push(`minLength (${p.minLength}) must not be greater than maxLength (${p.maxLength})`);
    fields.push('minLength');
  }
  if (p.maxLength > POLICY_LIMITS.maxLength) {
    messages.push(`maxLength must be at most ${POLICY_LIMITS.maxLength}`);
    fields.push('maxLength');
  }
  if (p.allowPassphrases) {
    if (p.minPhraseLength > p.maxLength) {
      messages.push(
        `minPhraseLength (${p.minPhraseLength}) must not be greater than maxLength (${p.maxLength}) while allowPassphrases is true`,
      );
      fields.push('minPhraseLength');
    } else if (p.minPhraseLength < p.minLength) {
      messages.push(
        `minPhraseLength (${p.minPhraseLength}) must be at least minLength (${p.minLength}) while allowPassphrases is true`,
      );
      fields.push('minPhraseLength');
    }
  }
  return { messages, fields };
}

/** One rule a password failed: the policy field (or rule name) and a message that completes "Password …". */
export interface Failure {
  rule: string;
  message: string;
}

const CLASSES: Record<OptionalTest, { re: RegExp; name: string }> = {
  requireLowercase: { re: /\p{Ll}/u, name: 'a lower-case letter' },
  requireUppercase: { re: /\p{Lu}/u, name: 'an upper-case letter' },
  requireNumbers: { re: /\p{Nd}/u, name: 'a digit' },
  requireSpecialChars: { re: /[^\p{L}\p{N}]/u, name: 'a special character (anything but a letter or digit)' },
};

/** Length in Unicode code points (what a person counts), not UTF-16 units. */
export const codePoints = (s: string): number => {
  let n = 0;
  for (const _ of s) n++;
  return n;
};

/**
 * The cheap rules: length, character classes (waived for a passphrase), and the email address. The common-password
 * list and the history are checked by the service.
 */
export function checkPassword(p: Readonly<PasswordPolicy>, password: string, email?: string): Failure[] {
  const failures: Failure[] = [];
  const length = codePoints(password);
  if (length < p.minLength)
    failures.push({ rule: 'minLength', message: `must be at least ${p.minLength} characters long` });
  if (length > p.maxLength)
    failures.push({ rule: 'maxLength', message: `must be at most ${p.maxLength} characters long` });

  const passphrase = p.allowPassphrases && length >= p.minPhraseLength;
  if (!passphrase) {
    let passed = 0;
    for (const k of OPTIONAL_TESTS) {
      const ok = CLASSES[k].re.test(password);
      if (ok) passed++;
      else if (p[k]) failures.push({ rule: k, message: `must contain ${CLASSES[k].name}` });
    }
    if (passed < p.minOptionalTestsToPass) {
      failures.push({
        rule: 'minOptionalTestsToPass',
        message: `must contain at least ${p.minOptionalTestsToPass} of: a lower-case letter, an upper-case letter, a digit, a special character`,
      });
    }
  }

  if (email) {
    const lower = password.toLowerCase();
    const address = email.trim().toLowerCase();
    const local = address.split('@')[0];
    if (lower === address || lower === local || (local.length >= 3 && lower.includes(local))) {
      failures.push({ rule: 'email', message: 'must not contain the email address or its name part' });
    }
  }
  return failures;
}

/** The wire form of a policy (`PasswordConfigResponse`). */
export function toPasswordConfig(p: Readonly<PasswordPolicy>) {
  return {
    allowPassphrases: p.allowPassphrases,
    maxLength: p.maxLength,
    minLength: p.minLength,
    minPhraseLength: p.minPhraseLength,
    minOptionalTestsToPass: p.minOptionalTestsToPass,
    blockPwnedPasswords: p.blockPwnedPasswords,
    optionalTests: {
      requireLowercase: p.requireLowercase,
      requireUppercase: p.requireUppercase,
      requireNumbers: p.requireNumbers,
      requireSpecialChars: p.requireSpecialChars,
    },
    requiredTests: {
      minLength: p.minLength,
      maxLength: p.maxLength,
      blockPwnedPasswords: p.blockPwnedPasswords,
      rejectEmail: true,
    },
  };
}
