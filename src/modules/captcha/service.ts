import type { Logger } from 'pino';
import { AppError } from '../../http/errors.ts';
import { decrypt, encrypt, newId } from '../../lib/crypto.ts';
import { isUuid } from '../../lib/pg-errors.ts';
import { iso } from '../../lib/time.ts';
import type { Db } from '../../storage/db.ts';
import type { Invalidation } from '../../storage/invalidation.ts';
import { createReadCache } from '../../storage/read-cache.ts';
import { findById } from '../users/index.ts';
import type { CaptchaPolicy, CaptchaPolicyBody, PublicCaptchaPolicy } from './schema.ts';
import * as store from './store.ts';
import { siteverify } from './verify.ts';

/**
 * How long a policy change made by another instance may take to reach this one's checks. A change made through this
 * instance applies at once (the cached entry is dropped after the change commits).
 */
export const CAPTCHA_POLICY_CACHE_MS = 2000;
/** Invalidation topic of the captcha policy (src/storage/invalidation.ts). */
export const CAPTCHA_TOPIC = 'captcha.policy';
/** Longest token sent to the provider; a longer one is refused without a call (real tokens are about 2 KB at most). */
const MAX_TOKEN = 8192;
/** Provider error codes that mean the stored secret (our side) is wrong, not the visitor's token. */
const SECRET_ERRORS = new Set([
  'missing-input-secret',
  'invalid-input-secret',
  'invalid-keys',
  'sitekey-secret-mismatch',
]);

/** What the checks need of an enabled policy: the secret in clear (memory only) and the exemptions, ready to match. */
export interface EnforcedPolicy {
  secret: string;
  minScore: number;
  exactEmails: Set<string>;
  domains: Set<string>;
}

/** What a protected request offers the check: its token, and the email it is about (given, or found by user id). */
export interface CaptchaAttempt {
  token: string | undefined;
  email?: string;
  userId?: string;
  ip: string | undefined;
}

/** `ignoredEmails` entries: `user@domain` (exact) or `*@domain`; lower-cased, deduplicated, order kept. */
function normalizeIgnored(list: string[]): string[] {
  const out: string[] = [];
  list.forEach((raw, i) => {
    const v = raw.trim().toLowerCase();
    const at = v.lastIndexOf('@');
    const local = v.slice(0, at);
    const domain = v.slice(at + 1);
    const okDomain = /^[a-z0-9](?:[a-z0-9-]*[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]*[a-z0-9])?)+$/.test(domain);
    const okLocal = local === '*' || (local.length > 0 && !/[\s*]/.test(local) && !local.includes('@'));
    if (at <= 0 || !okDomain || !okLocal) {
      throw new AppError(
        'VALIDATION',
        `body.ignoredEmails.${i} must be an email address or *@domain (got "${raw.slice(0, 80)}")`,
      );
    }
    if (!out.includes(v)) out.push(v);
  });
  return out;
}

function enforcedOf(row: store.CaptchaPolicyRow, kek: Buffer): EnforcedPolicy {
  const exactEmails = new Set<string>();
  const domains = new Set<string>();
  for (const e of row.ignored_emails) {
    if (e.startsWith('*@')) domains.add(e.slice(2));
    else exactEmails.add(e);
  }
  return { secret: decrypt(kek, row.secret_key_enc), minScore: Number(row.min_score), exactEmails, domains };
}

/** Whether the policy exempts `email` (case-insensitive exact match, or its domain is listed as `*@domain`). */
export function exempts(policy: EnforcedPolicy, email: string | undefined): boolean {
  if (!email) return false;
  const e = email.trim().toLowerCase();
  return policy.exactEmails.has(e) || policy.domains.has(e.slice(e.lastIndexOf('@') + 1));
}

export type CaptchaService = ReturnType<typeof createCaptchaService>;

/**
 * The environment's captcha policy and the check of the public routes it protects (hook.ts). The secret key is sealed
 * with the key-encryption key at rest and held in clear only in the short-lived in-process cache.
 */
export function createCaptchaService(deps: {
  db: Db;
  kek: Buffer;
  verifyUrl: string;
  log: Logger;
  timeoutMs?: number;
  /** Cross-instance invalidation of the cached policy (src/storage/invalidation.ts). */
  invalidation?: Invalidation;
}) {
  const { db, kek } = deps;
  // Read by every protected request (password sign-in among them): a statement only on a miss, also while disabled.
  const cache = createReadCache<EnforcedPolicy | null>({ ttlMs: CAPTCHA_POLICY_CACHE_MS, max: 1 });
  // Read by every login page load.
  const publicCache = createReadCache<PublicCaptchaPolicy>({ ttlMs: CAPTCHA_POLICY_CACHE_MS, max: 1 });
  const drop = () => {
    cache.invalidate();
    publicCache.invalidate();
  };
  deps.invalidation?.subscribe(CAPTCHA_TOPIC, drop);

  const view = (r: store.CaptchaPolicyRow): CaptchaPolicy => ({
    id: r.id,
    siteKey: r.site_key,
    secretKey: decrypt(kek, r.secret_key_enc),
    enabled: r.enabled,
    minScore: Number(r.min_score),
    ignoredEmails: r.ignored_emails,
    createdAt: iso(r.created_at)!,
    updatedAt: iso(r.updated_at)!,
  });
  const values = (b: CaptchaPolicyBody): store.CaptchaPolicyValues => ({
    site_key: b.siteKey,
    secret_key_enc: encrypt(kek, b.secretKey),
    enabled: b.enabled,
    min_score: b.minScore,
    ignored_emails: b.ignoredEmails === undefined ? undefined : normalizeIgnored(b.ignoredEmails),
  });
  async function changing<T>(fn: () => Promise<T>): Promise<T> {
    let out: T;
    try {
      out = await fn();
    } finally {
      drop();
    }
    await deps.invalidation?.publish(db, CAPTCHA_TOPIC);
    return out;
  }

  /** The policy to enforce, or null when there is none or it is disabled. */
  async function enforced(): Promise<EnforcedPolicy | null> {
    return cache.get('policy', async () => {
      const row = await store.get(db);
      if (!row || !row.enabled) return null;
      try {
        return enforcedOf(row, kek);
      } catch {
        deps.log.error(
          'captcha policy: the stored secret key cannot be decrypted (was GATEHOUSE_ENCRYPTION_KEY changed?); protected routes answer 503 until the policy is saved again',
        );
        throw new AppError('CAPTCHA_UNAVAILABLE');
      }
    });
  }

  return {
    async get(): Promise<CaptchaPolicy> {
      const row = await store.get(db);
      if (!row) throw new AppError('CAPTCHA_POLICY_NOT_FOUND');
      return view(row);
    },
    async create(body: CaptchaPolicyBody): Promise<CaptchaPolicy> {
      const v = values(body);
      const row = await changing(() => store.insert(db, newId(), v));
      if (!row) throw new AppError('CAPTCHA_POLICY_EXISTS');
      return view(row);
    },
    /** Replaces the policy (creating it when there is none); an omitted ignoredEmails keeps the stored list. */
    async update(body: CaptchaPolicyBody): Promise<CaptchaPolicy> {
      const v = values(body);
      return view(await changing(() => store.upsert(db, newId(), v)));
    },
    /** For login pages: whether a token is needed and the site key to get one with. */
    async publicView(): Promise<PublicCaptchaPolicy> {
      return publicCache.get('public', async () => {
        const row = await store.get(db);
        return row ? { enabled: row.enabled, siteKey: row.site_key } : { enabled: false };
      });
    },

    /**
     * The check of a protected request: nothing when the policy is off or exempts the email; otherwise the token must
     * be present (CAPTCHA_REQUIRED), accepted by the provider with a score of at least minScore (CAPTCHA_INVALID).
     * Fails closed: a provider that cannot answer (or refuses our secret) is CAPTCHA_UNAVAILABLE (503).
     */
    async check(attempt: CaptchaAttempt): Promise<void> {
      const policy = await enforced();
      if (!policy) return;
      if (policy.exactEmails.size + policy.domains.size > 0) {
        let email = attempt.email;
        if (!email && attempt.userId && isUuid(attempt.userId))
          email = (await findById(db, attempt.userId))?.email ?? undefined;
        if (exempts(policy, email)) return;
      }
      const token = attempt.token?.trim();
      if (!token)
        throw new AppError(
          'CAPTCHA_REQUIRED',
          'body.recaptchaToken is required: the captcha policy is enabled (login pages find the site key at GET /identity/resources/configurations/v1/captcha-policy/public)',
        );
      if (token.length > MAX_TOKEN)
        throw new AppError('CAPTCHA_INVALID', `body.recaptchaToken must be at most ${MAX_TOKEN} characters`);
      const r = await siteverify(deps.verifyUrl, policy.secret, token, attempt.ip, deps.timeoutMs);
      if (r.kind === 'unavailable') {
        deps.log.warn({ reason: r.reason }, 'captcha provider unavailable; request refused (fail closed)');
        throw new AppError('CAPTCHA_UNAVAILABLE', undefined, undefined, { 'retry-after': '5' });
      }
      if (!r.success) {
        if (r.errorCodes.some((c) => SECRET_ERRORS.has(c))) {
          deps.log.error(
            { errorCodes: r.errorCodes },
            "captcha provider refused the policy's secret key; fix it with PUT /identity/resources/configurations/v1/captcha-policy",
          );
          throw new AppError('CAPTCHA_UNAVAILABLE', undefined, undefined, { 'retry-after': '5' });
        }
        const codes = r.errorCodes.length ? ` (${r.errorCodes.join(', ')})` : '';
        throw new AppError(
          'CAPTCHA_INVALID',
          `body.recaptchaToken was refused by the captcha provider${codes}; solve the captcha again`,
        );
      }
      // reCAPTCHA v2, hCaptcha and Turnstile answer no score: their success is the verdict.
      if (r.score !== undefined && r.score < policy.minScore) {
        throw new AppError(
          'CAPTCHA_INVALID',
          "body.recaptchaToken scored below the captcha policy's minScore; solve the captcha again",
        );
      }
    },
  };
}
