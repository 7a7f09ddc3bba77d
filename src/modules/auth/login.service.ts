import { newId, randomSecret, sha256Hex } from '../../lib/crypto.ts';
import { AppError } from '../../http/errors.ts';
import type { Db, Queryable } from '../../storage/db.ts';
import type { EnvironmentService } from '../environment/index.ts';
import type { PasswordService } from '../credentials/index.ts';
import { addFailedAttempt, lockoutRule, updateUser, type UserRow, type UsersService } from '../users/index.ts';
import type { LimitsService } from '../limits/index.ts';
import { type FailedAttempt, type SignInLimitRules, signInLimitKeys } from './sign-in-limits.ts';
import type { EventsService } from '../events/index.ts';
import { passwordSignInSteps, runSteps, type PasswordSignIn } from './login.steps.ts';
import { createRefresh } from './refresh.service.ts';
import { createBrowserSessions } from './browser-session.ts';
import { createReissue } from './reissue.service.ts';
import { createStepUp, type StepUpFactor } from './step-up.service.ts';
import type { SessionsService } from './sessions.service.ts';
import type {
  ClientInfo,
  GateInput,
  GateSpec,
  InviteJoin,
  ResetTokenStore,
  Respond,
  SignInOptions,
  UsedSettings,
} from './sign-in.types.ts';
import * as store from './store.ts';
import { emailOf, type LoginResponse, type ResetPasswordResponse, type TokenIssuer } from './tokens.ts';

export interface LoginDeps {
  db: Db;
  users: UsersService;
  passwords: PasswordService;
  environment: EnvironmentService;
  sessions: SessionsService;
  issue: TokenIssuer;
  /** The sign-in limits, counted in the shared store (limits module) with these rules. */
  limits: { store: LimitsService; rules: SignInLimitRules };
  /** The outbox: user.signed_in, user.sign_in_failed, user.locked. */
  events?: EventsService;
  /** The `iss` of the tokens (PUBLIC_URL, as the keys service signs them): the OAuth discovery's issuer. */
  issuer?: string;
  /** The sign-in gates, in the order they run (GateSpec). */
  gates?: readonly GateSpec[];
  /** What a password sign-in with `invitationToken` runs after the password checks (the invitations module's). */
  inviteJoin?: InviteJoin;
  /** The second factor the step-up accepts as `{code}` (the MFA module's authenticator app). */
  stepUpFactor?: StepUpFactor;
  /** Where the reset answer of a migrated user or an expired password stores its token (the recovery module's). */
  resetTokens: ResetTokenStore;
}

export type LoginService = ReturnType<typeof createLoginService>;

/** The id no user has: the unknown identifier's failure count is written to it (no row). */
const NO_USER = '00000000-0000-0000-0000-000000000000';

/** Password sign-in, refresh-token rotation (refresh.service.ts) and logout. */
export function createLoginService(deps: LoginDeps) {
  const { db, users, passwords } = deps;
  const gates = deps.gates ?? [];
  const prefetches: store.GatePrefetch[] = gates.flatMap((g) =>
    g.prefetch ? [{ name: g.name, sql: g.prefetch }] : [],
  );

  async function runGates(
    q: Queryable,
    a: GateInput,
    satisfied: string[] = [],
    resumes?: string,
    prefetched?: Record<string, unknown>,
  ): Promise<Record<string, unknown> | undefined> {
    const resumed = resumes ? gates.findIndex((g) => g.name === resumes) : -1;
    for (const [i, { name, gate, stable }] of gates.entries()) {
      if (satisfied.includes(name) || name === resumes || (stable && i < resumed)) continue;
      const challenge = await gate(q, prefetched && name in prefetched ? { ...a, prefetched: prefetched[name] } : a);
      if (challenge && a.stage === 'login') return challenge;
    }
    return undefined;
  }

  /** Picks the account, runs the gates and starts a session for a user whose identity a flow has established. */
  async function signInUser(
    tx: Queryable,
    user: UserRow,
    client: ClientInfo,
    amr: string[],
    opts: SignInOptions = {},
    used?: UsedSettings,
  ): Promise<LoginResponse | Record<string, unknown>> {
    let picked: Awaited<ReturnType<typeof pickAccount>>;
    if (opts.tenantId) {
      const view = await users.accessView(tx, user.id, opts.memberships);
      const membership = await view.accessTo(opts.tenantId);
      if (!membership) throw new AppError('NO_ACCOUNT_ACCESS', `The user has no access to account ${opts.tenantId}`);
      picked = { tenantId: opts.tenantId, membership, tenantIds: view.tenantIds };
    } else picked = await pickAccount(tx, user, opts.memberships);
    const { tenantId, membership, tenantIds } = picked;
    const challenge = await runGates(
      tx,
      { stage: 'login', user, tenantId, client, amr, memberships: opts.memberships, version: opts.version },
      opts.satisfied,
      opts.resumes,
      opts.prefetched,
    );
    if (challenge) return challenge;
    // The sign-in is recorded on the user (failed attempts reset, last login, active account) by start's statement.
    return start(
      tx,
      { ...user, active_tenant_id: tenantId },
      tenantId,
      membership,
      client,
      amr,
      tenantIds,
      used,
      opts.guard,
    );
  }

  const limitKeys = (ip: string | undefined, identifier: string) => signInLimitKeys(deps.limits.rules, ip, identifier);

  /**
   * The account to sign in to: the active one when the user may act there, else the first membership that works.
   * Also answers the user's accounts (the token's tenantIds), so they are read once per sign-in.
   */
  async function pickAccount(q: Queryable, user: UserRow, memberships?: SignInOptions['memberships']) {
    const view = await users.accessView(q, user.id, memberships);
    const candidates = [user.active_tenant_id, ...view.tenantIds].filter((t): t is string => Boolean(t));
    for (const tenantId of new Set(candidates)) {
      const membership = await view.accessTo(tenantId);
      if (membership) return { tenantId, membership, tenantIds: view.tenantIds };
    }
    throw new AppError(
      'NO_ACCOUNT_ACCESS',
      'The user has no active account to sign in to (disabled or expired everywhere)',
    );
  }

  async function start(
    tx: Queryable,
    user: UserRow,
    tenantId: string,
    membership: NonNullable<Awaited<ReturnType<UsersService['accessTo']>>>,
    client: ClientInfo,
    amr: string[],
    tenantIds?: string[],
    used?: UsedSettings,
    guard?: SignInOptions['guard'],
  ): Promise<LoginResponse> {
    const refreshToken = randomSecret(32);
    const sessionId = newId();
    // The settings and the session policy are read once here (both cached in process) and handed to what needs them.
    const settings = await deps.environment.cachedSettings(tx);
    const policy = await deps.sessions.policyFor(tx, tenantId);
    const expiresAt = await deps.sessions.newSessionExpiry(tx, tenantId, {
      policy,
      refreshLifetime: settings.defaultRefreshTokenExpiration,
    });
    await deps.sessions.makeRoomFor(tx, user.id, tenantId, policy);
    // One statement: the user's sign-in recorded, the session and its refresh token inserted, the token's role claims read.
    const claimsSql = await deps.issue.claimsSql(tx, { userId: user.id, tenantId, roleIds: membership.role_ids });
    // The request's audit entry (when the route lets the statement store it) and the user.signed_in event are
    // written by the session-start statement too: one statement in all.
    const entry = client.audit?.({ userId: user.id });
    const event = deps.events?.inline({
      eventKey: 'user.signed_in',
      tenantId,
      entity: { type: 'user', id: user.id },
      data: { userId: user.id, email: user.email, tenantId, sessionId, amr },
    });
    const claims = await store.startSession(
      tx,
      {
        id: sessionId,
        tenantId,
        userId: user.id,
        amr,
        ip: client.ip,
        userAgent: client.userAgent,
        expiresAt,
        tokenHash: sha256Hex(refreshToken),
        lastLogin: new Date(),
      },
      claimsSql,
      { guard, audit: entry, event },
    );
    event?.written();
    if (entry) (client.inlined ??= []).push(entry);
    return respond(
      tx,
      user,
      tenantId,
      membership,
      sessionId,
      refreshToken,
      amr,
      new Date(),
      { tenantIds, settings, claims },
      used,
    );
  }

  const respond: Respond = async (
    q,
    user,
    tenantId,
    membership,
    sessionId,
    refreshToken,
    amr,
    authTime,
    known = {},
    used,
  ) => {
    const tenantIds = known.tenantIds ?? (await users.accountsOf(user.id, q)).map((a) => a.tenantId);
    const settings = known.settings ?? (await deps.environment.cachedSettings(q));
    if (used) used.settings = settings;
    const { accessToken, expiresIn } = await deps.issue(
      q,
      { user, tenantId, membership, tenantIds, sessionId, amr, authTime },
      { settings, claims: known.claims },
    );
    return {
      tokenType: 'bearer',
      accessToken,
      refreshToken,
      expiresIn,
      expires: new Date(Date.now() + expiresIn * 1000).toISOString(),
      mfaRequired: false,
      userId: user.id,
      ...emailOf(user),
    };
  };

  /** Counts a failed password; the lockout policy of the user's account may lock the user. */
  async function registerFailure(user: UserRow, attempt: FailedAttempt): Promise<void> {
    const policy = await passwords.lockoutPolicy(db, user.active_tenant_id ?? undefined);
    await db.transaction(async (tx) => {
      await deps.limits.store.record(tx, limitKeys(attempt.ip, attempt.identifier).failures);
      // Counted and locked in one statement: concurrent wrong passwords lock at the configured count, not later.
      const counted = await addFailedAttempt(tx, user.id, lockoutRule(policy));
      if (!counted) return;
      const tenantId = user.active_tenant_id;
      await deps.events?.emit(tx, {
        eventKey: 'user.sign_in_failed',
        tenantId,
        entity: { type: 'user', id: user.id },
        data: {
          userId: user.id,
          email: user.email,
          tenantId,
          reason: 'invalid_password',
          failedAttempts: counted.attempts,
        },
      });
      if (!counted.lockedNow) return;
      await deps.events?.emit(tx, {
        eventKey: 'user.locked',
        tenantId,
        entity: { type: 'user', id: user.id },
        data: {
          userId: user.id,
          email: user.email,
          tenantId,
          reason: 'lockout',
          lockedUntil: counted.lockedUntil?.toISOString() ?? null,
        },
      });
      await passwords.lockedOut(tx, user);
    });
  }

  /**
   * The failure of an identifier that names no user costs what registerFailure costs a known one: the same lockout
   * policy read, then a committed transaction of two statements: the failure count (of no row) and, in place of the
   * sign-in-failed event (there is no user to name), a row of sign_in_decoys (migration 0040). So the answer's time
   * does not tell whether the email has a user, on PostgreSQL's commit flush too.
   */
  async function registerUnknownFailure(identifier: string, ip: string | undefined): Promise<void> {
    const policy = await passwords.lockoutPolicy(db, undefined);
    await db.transaction(async (tx) => {
      await deps.limits.store.record(tx, limitKeys(ip, identifier).failures);
      // The known user's statement, on no row: the same work either way.
      await addFailedAttempt(tx, NO_USER, lockoutRule(policy));
      await store.countUnknownFailure(tx, { email: identifier, reason: 'invalid_password', failedAttempts: 1 });
    });
  }

  /**
   * Before a password check: one statement counts the attempt under the address's flood ceiling and refuses when
   * the failures of this identifier, this address and identifier, or this address reached their limits.
   */
  const limitAttempt = async (ip: string | undefined, identifier: string, q?: Queryable): Promise<void> => {
    const k = limitKeys(ip, identifier);
    await deps.limits.store.enforce(q, { count: [k.flood], check: k.failures }, 'Too many sign-in attempts');
  };
  const passwordSteps = passwordSignInSteps({
    db,
    passwords,
    events: deps.events,
    limit: limitAttempt,
    registerFailure,
    registerUnknownFailure,
    signInUser,
    prefetches,
    inviteJoin: deps.inviteJoin,
    resetTokens: deps.resetTokens,
  });

  return {
    /** The `iss` of the tokens this service issues (the OAuth discovery document's issuer). */
    issuer: deps.issuer ?? '',

    /** Counts an attempt against the sign-in limits (per client IP, per identifier): a password check elsewhere. */
    limitAttempt,
    /** A wrong password given elsewhere (password change) counts as a failed sign-in. */
    registerFailure,

    /**
     * The password sign-in: the declared steps read, gates, verify, session and answer (login.steps.ts). `used`, when
     * given, receives the environment settings the sign-in read (for the refresh cookie).
     */
    async login(
      body: PasswordSignIn['body'],
      client: ClientInfo,
      used?: UsedSettings,
    ): Promise<LoginResponse | ResetPasswordResponse> {
      return runSteps(passwordSteps, { body, client, used });
    },

    /**
     * Signs in a user whose identity another flow established (MFA verify, passwordless, SSO, social, activation,
     * invitation): same account choice, gates and session as a password sign-in. Runs in the caller's transaction
     * when `q` is one, else in a new one. Answers a challenge object when a gate asks for one.
     */
    async signIn(
      q: Queryable | undefined,
      user: UserRow,
      client: ClientInfo,
      amr: string[],
      opts: SignInOptions = {},
      used?: UsedSettings,
    ): Promise<LoginResponse | Record<string, unknown>> {
      if (q) return signInUser(q, user, client, amr, opts, used);
      return db.transaction((tx) => signInUser(tx, user, client, amr, opts, used));
    },

    /** Rotates the refresh token (refresh.service.ts); runs the gates at the 'refresh' stage. */
    refresh: createRefresh({
      db,
      users,
      environment: deps.environment,
      sessions: deps.sessions,
      issue: deps.issue,
      runGates,
      respond,
    }),

    /** A fresh access token for a live session, its refresh token not rotated (reissue.service.ts). */
    reissue: createReissue({
      db,
      users,
      environment: deps.environment,
      sessions: deps.sessions,
      issue: deps.issue,
      runGates,
    }),

    /** The live session behind a browser's refresh cookie, not rotated (browser-session.ts). */
    browserSession: createBrowserSessions({
      db,
      users,
      environment: deps.environment,
      sessions: deps.sessions,
      issue: deps.issue,
      runGates,
    }),

    /** Re-authentication of the caller's session (step-up.service.ts): its auth_time becomes now. */
    stepUp: createStepUp({
      db,
      users,
      environment: deps.environment,
      sessions: deps.sessions,
      issue: deps.issue,
      runGates,
      respond,
      passwords,
      registerFailure,
      limit: limitAttempt,
      factor: deps.stepUpFactor,
    }),

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
        if (sessionId)
          await tx.query('UPDATE sessions SET tenant_id = $2 WHERE id = $1 AND user_id = $3', [
            sessionId,
            tenantId,
            userId,
          ]);
      });
    },
  };
}
