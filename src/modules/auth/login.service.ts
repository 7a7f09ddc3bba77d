import { newId, randomSecret, sha256Hex } from '../../lib/crypto.ts';
import { AppError } from '../../http/errors.ts';
import type { Db, Queryable } from '../../storage/db.ts';
import type { EnvironmentService, VendorSettings } from '../environment/index.ts';
import { hasherFor, type PasswordService } from '../credentials/index.ts';
import { findByEmail, findById, findByUsername, isLockedNow, updateUser, type UserRow, type UsersService } from '../users/index.ts';
import type { RateLimiter } from './rate-limit.ts';
import type { SessionsService } from './sessions.service.ts';
import * as store from './store.ts';
import type { LoginResponse, ResetPasswordResponse, TokenIssuer } from './tokens.ts';

export interface LoginDeps {
  db: Db;
  users: UsersService;
  passwords: PasswordService;
  environment: EnvironmentService;
  sessions: SessionsService;
  issue: TokenIssuer;
  limits: { perIp: RateLimiter; perIdentifier: RateLimiter };
}

export interface ClientInfo {
  ip?: string;
  userAgent?: string;
}

export type LoginService = ReturnType<typeof createLoginService>;

/** Filled in by `login` and `refresh` with the environment settings they read, so the caller need not read them again. */
export interface UsedSettings {
  settings?: VendorSettings;
}

/** Password sign-in, refresh-token rotation and logout. */
export function createLoginService(deps: LoginDeps) {
  const { db, users, passwords } = deps;

  function limit(key: string, limiter: RateLimiter) {
    const r = limiter.hit(key);
    if (r.limited) throw new AppError('RATE_LIMITED', `Too many sign-in attempts; retry in ${r.retryAfter} s`, undefined, { 'retry-after': String(r.retryAfter) });
  }

  /**
   * The account to sign in to: the active one when the user may act there, else the first membership that works.
   * Also answers the user's accounts (the token's tenantIds), so they are read once per sign-in.
   */
  async function pickAccount(q: Queryable, user: UserRow) {
    const view = await users.accessView(q, user.id);
    const candidates = [user.active_tenant_id, ...view.tenantIds].filter((t): t is string => Boolean(t));
    for (const tenantId of new Set(candidates)) {
      const membership = await view.accessTo(tenantId);
      if (membership) return { tenantId, membership, tenantIds: view.tenantIds };
    }
    throw new AppError('NO_ACCOUNT_ACCESS', 'The user has no active account to sign in to (disabled or expired everywhere)');
  }

  async function start(tx: Queryable, user: UserRow, tenantId: string, membership: NonNullable<Awaited<ReturnType<UsersService['accessTo']>>>, client: ClientInfo, amr: string[], tenantIds?: string[], used?: UsedSettings): Promise<LoginResponse> {
    const refreshToken = randomSecret(32);
    const sessionId = newId();
    // The settings and the session policy are read once here and handed to what needs them.
    const settings = await deps.environment.settings(tx);
    const policy = await deps.sessions.policyFor(tx, tenantId);
    const expiresAt = await deps.sessions.newSessionExpiry(tx, tenantId, { policy, refreshLifetime: settings.defaultRefreshTokenExpiration });
    await deps.sessions.makeRoomFor(tx, user.id, tenantId, policy);
    await store.insertSession(tx, { id: sessionId, tenantId, userId: user.id, amr, ip: client.ip, userAgent: client.userAgent, expiresAt, tokenHash: sha256Hex(refreshToken) });
    return respond(tx, user, tenantId, membership, sessionId, refreshToken, amr, new Date(), { tenantIds, settings }, used);
  }

  async function respond(
    q: Queryable,
    user: UserRow,
    tenantId: string,
    membership: NonNullable<Awaited<ReturnType<UsersService['accessTo']>>>,
    sessionId: string,
    refreshToken: string,
    amr: string[],
    authTime: Date,
    known: { tenantIds?: string[]; settings?: VendorSettings } = {},
    used?: UsedSettings,
  ): Promise<LoginResponse> {
    const tenantIds = known.tenantIds ?? (await users.accountsOf(user.id, q)).map((a) => a.tenantId);
    const settings = known.settings ?? (await deps.environment.settings(q));
    if (used) used.settings = settings;
    const { accessToken, expiresIn } = await deps.issue(q, { user, tenantId, membership, tenantIds, sessionId, amr, authTime }, { settings });
    return {
      tokenType: 'bearer',
      accessToken,
      refreshToken,
      expiresIn,
      expires: new Date(Date.now() + expiresIn * 1000).toISOString(),
      mfaRequired: false,
      userId: user.id,
      userEmail: user.email,
      emailVerified: user.verified,
    };
  }

  /** Counts a failed password; the lockout policy of the user's account may lock the user. */
  async function registerFailure(user: UserRow): Promise<void> {
    const policy = await passwords.lockoutPolicy(db, user.active_tenant_id ?? undefined);
    const attempts = user.failed_attempts + 1;
    const values: Record<string, unknown> = { failed_attempts: attempts };
    if (policy.enabled && attempts >= policy.maxAttempts) {
      values.is_locked = true;
      values.locked_until = policy.lockDurationSeconds ? new Date(Date.now() + policy.lockDurationSeconds * 1000) : null;
    }
    await updateUser(db, user.id, values);
  }

  return {
    /** `used`, when given, receives the environment settings the sign-in read (for the refresh cookie). */
    async login(body: { email?: string; username?: string; password: string }, client: ClientInfo, used?: UsedSettings): Promise<LoginResponse | ResetPasswordResponse> {
      const identifier = (body.email ?? body.username ?? '').trim().toLowerCase();
      if (!identifier) throw new AppError('VALIDATION', 'body.email or body.username is required');
      limit(`ip:${client.ip ?? 'unknown'}`, deps.limits.perIp);
      limit(`id:${identifier}`, deps.limits.perIdentifier);

      let user = body.email ? await findByEmail(db, identifier) : await findByUsername(db, identifier);
      if (!user) {
        await passwords.decoy(body.password);
        throw new AppError('INVALID_LOGIN');
      }
      // A lock whose time has passed is lifted at the next attempt, with the failure count reset.
      if (user.is_locked && user.locked_until && user.locked_until <= new Date()) {
        await updateUser(db, user.id, { is_locked: false, locked_until: null, failed_attempts: 0 });
        user = { ...user, is_locked: false, locked_until: null, failed_attempts: 0 };
      }
      if (isLockedNow(user)) {
        await passwords.decoy(body.password);
        throw new AppError('USER_LOCKED', 'The user is locked; ask an administrator to unlock it or wait for the lock to expire');
      }
      // A migrated user whose hash is absent or of a format Gatehouse cannot verify must set a password: the reset
      // flow, never a silent failure. Only users marked so at migration; a one-time token, stored hashed, 1 hour.
      if (user.must_reset_password && !(user.password_hash && hasherFor(user.password_hash))) {
        const resetPasswordToken = randomSecret(32);
        await store.insertResetToken(db, { userId: user.id, tokenHash: sha256Hex(resetPasswordToken), reason: 'migrated-without-password', ttlSeconds: 3600 });
        return { mfaRequired: false, resetPasswordToken, userId: user.id, userEmail: user.email, emailVerified: user.verified };
      }
      const { ok, needsRehash } = await passwords.verify(body.password, user.password_hash);
      if (!ok) {
        await registerFailure(user);
        throw new AppError('INVALID_LOGIN');
      }
      const newHash = needsRehash ? await passwords.hash(body.password) : undefined;
      const signedIn = user;
      return db.transaction(async (tx) => {
        const { tenantId, membership, tenantIds } = await pickAccount(tx, signedIn);
        await updateUser(tx, signedIn.id, { failed_attempts: 0, last_login: new Date(), active_tenant_id: tenantId, ...(newHash ? { password_hash: newHash } : {}) });
        return start(tx, { ...signedIn, active_tenant_id: tenantId }, tenantId, membership, client, ['pwd'], tenantIds, used);
      });
    },

    /**
     * Rotates the refresh token. A token already rotated is a replay: the whole session is revoked. `used`, when
     * given, receives the environment settings the refresh read (for the refresh cookie).
     */
    async refresh(refreshToken: string, used?: UsedSettings): Promise<LoginResponse> {
      const hash = sha256Hex(refreshToken);
      const outcome = await db.transaction(async (tx) => {
        const session = await store.sessionByRefresh(tx, hash);
        if (!session) return { error: new AppError('INVALID_REFRESH_TOKEN') };
        if (session.revoked_at) return { error: new AppError('SESSION_REVOKED') };
        if (session.rotated_at) {
          await store.revoke(tx, { sessionId: session.id }, 'refresh token reuse');
          return { error: new AppError('SESSION_REVOKED', 'This refresh token was already used; the session is revoked') };
        }
        const expired = await deps.sessions.isExpired(tx, session);
        if (expired) {
          await store.revoke(tx, { sessionId: session.id }, expired);
          return { error: new AppError('INVALID_REFRESH_TOKEN', `The session ended (${expired})`) };
        }
        const user = await findById(tx, session.user_id);
        if (!user) return { error: new AppError('INVALID_REFRESH_TOKEN') };
        if (isLockedNow(user)) return { error: new AppError('USER_LOCKED') };
        const access = await users.accessView(tx, user.id);
        const membership = await access.accessTo(session.tenant_id);
        if (!membership) {
          await store.revoke(tx, { sessionId: session.id }, 'account access removed');
          return { error: new AppError('NO_ACCOUNT_ACCESS', 'The user no longer has access to the account of this session') };
        }
        const next = randomSecret(32);
        await store.rotate(tx, session.id, hash, sha256Hex(next), session.tenant_id);
        return { response: await respond(tx, user, session.tenant_id, membership, session.id, next, session.amr, session.created_at, { tenantIds: access.tenantIds }, used) };
      });
      if ('error' in outcome) throw outcome.error;
      return outcome.response;
    },

    /** Ends the session of a refresh token or of an access token's `sid`. Unknown tokens are ignored. */
    async logout(by: { refreshToken?: string; sessionId?: string }): Promise<void> {
      await db.transaction(async (tx) => {
        const session = by.refreshToken ? await store.sessionByRefresh(tx, sha256Hex(by.refreshToken)) : undefined;
        const id = session?.id ?? by.sessionId;
        if (id) await store.revoke(tx, { sessionId: id }, 'logout');
      });
    },

    /** Switches the session's account (and the user's active one); the next refresh issues tokens for it. */
    async switchAccount(userId: string, sessionId: string | undefined, tenantId: string): Promise<void> {
      await db.transaction(async (tx) => {
        const membership = await users.accessTo(tx, userId, tenantId);
        if (!membership) throw new AppError('NO_ACCOUNT_ACCESS', `The user has no access to account ${tenantId}`);
        await updateUser(tx, userId, { active_tenant_id: tenantId });
        if (sessionId) await tx.query('UPDATE sessions SET tenant_id = $2 WHERE id = $1 AND user_id = $3', [sessionId, tenantId, userId]);
      });
    },
  };
}
