import type { FailedAttempt } from './sign-in-limits.ts';
import { randomSecret, sha256Hex } from '../../lib/crypto.ts';
import { AppError } from '../../http/errors.ts';
import type { Db, Queryable } from '../../storage/db.ts';
import { hasherFor, type PasswordService, type RotationStatus } from '../credentials/index.ts';
import type { EventsService } from '../events/index.ts';
import { isLockedNow, rehashPassword, updateUser, type UserRow } from '../users/index.ts';
import type { ClientInfo, InviteJoin, ResetTokenStore, SignInOptions, UsedSettings } from './sign-in.types.ts';
import * as store from './store.ts';
import { emailOf, type LoginResponse, type ResetPasswordResponse } from './tokens.ts';

/**
 * The password sign-in as a declared list of named steps (read, gates, verify, session, answer), run in order by
 * `runSteps`. A step refuses by throwing, ends the sign-in early by answering (the reset answers), or fills in what
 * the next steps need. The order is the sign-in's: the timing of an unknown identifier and of a locked user (decoys)
 * depends on it.
 */
export interface PasswordSignIn {
  body: { email?: string; username?: string; password: string; invitationToken?: string };
  client: ClientInfo;
  used?: UsedSettings;
  /** read: the identifier as looked up, the user, the memberships and the gates' prefetched values. */
  identifier?: string;
  view?: store.SignInView;
  user?: UserRow;
  /** verify: the password-rotation state of the user's password (a notice in the answer when close to expiry). */
  rotation?: RotationStatus;
  /** session: the tokens, or a gate's challenge. */
  out?: LoginResponse | Record<string, unknown>;
}

type Answer = LoginResponse | ResetPasswordResponse;
export interface SignInStep {
  name: 'read' | 'gates' | 'verify' | 'session' | 'answer';
  run: (s: PasswordSignIn) => Promise<Answer | void>;
}

/** Runs the steps in order; the first that answers ends the sign-in. */
export async function runSteps(steps: readonly SignInStep[], s: PasswordSignIn): Promise<Answer> {
  for (const step of steps) {
    const answer = await step.run(s);
    if (answer) return answer;
  }
  throw new Error(`sign-in steps ${steps.map((x) => x.name).join(', ')} gave no answer`);
}

/** What the steps call: the modules that own each part, and the login service's own pieces. */
export interface StepDeps {
  db: Db;
  passwords: PasswordService;
  events?: EventsService;
  limit: (ip: string | undefined, identifier: string) => void;
  prefetches: readonly store.GatePrefetch[];
  registerFailure: (user: UserRow, attempt: FailedAttempt) => Promise<void>;
  registerUnknownFailure: (identifier: string, ip: string | undefined) => Promise<void>;
  signInUser: (
    q: Queryable,
    user: UserRow,
    client: ClientInfo,
    amr: string[],
    opts: SignInOptions,
    used?: UsedSettings,
  ) => Promise<LoginResponse | Record<string, unknown>>;
  inviteJoin?: InviteJoin;
  resetTokens: ResetTokenStore;
}

/** A step's input that an earlier step fills in (a missing one is a bug in the list's order). */
function had<T>(value: T | undefined, what: string): T {
  if (value === undefined) throw new Error(`sign-in step ran before ${what} was read`);
  return value;
}

/** The reset answer: a one-time token (stored hashed, 1 hour) that the password-reset route takes with a new one. */
async function resetAnswer(
  db: Db,
  tokens: ResetTokenStore,
  user: UserRow,
  reason: 'migrated-without-password' | 'password-expired',
): Promise<ResetPasswordResponse> {
  const resetPasswordToken = randomSecret(32);
  const tokenHash = sha256Hex(resetPasswordToken);
  await tokens(db, { userId: user.id, tokenHash, reason, ttlSeconds: 3600 });
  return { mfaRequired: false, resetPasswordToken, userId: user.id, ...emailOf(user) };
}

export function passwordSignInSteps(d: StepDeps): readonly SignInStep[] {
  const { db, passwords } = d;

  /** auth: the limits, then one statement: the user, the memberships and what the gates prefetch (store.signInView). */
  async function read(s: PasswordSignIn): Promise<void> {
    const identifier = (s.body.email ?? s.body.username ?? '').trim().toLowerCase();
    if (!identifier) throw new AppError('VALIDATION', 'body.email or body.username is required');
    await d.limit(s.client.ip, identifier);
    const view = await store.signInView(db, s.body.email ? 'email' : 'username', identifier, d.prefetches);
    if (!view || !view.user) {
      await passwords.decoy(s.body.password);
      await d.registerUnknownFailure(identifier, s.client.ip);
      throw new AppError('INVALID_LOGIN');
    }
    Object.assign(s, { identifier, view, user: view.user });
  }

  /** users and credentials: the user's lock (an expired one lifted) and a migrated user who must set a password. */
  async function gates(s: PasswordSignIn): Promise<Answer | void> {
    let user = had(s.user, 'the user');
    // A lock whose time has passed is lifted at the next attempt, with the failure count reset.
    if (user.is_locked && user.locked_until && user.locked_until <= new Date()) {
      await updateUser(db, user.id, { is_locked: false, locked_until: null, failed_attempts: 0 });
      s.user = user = { ...user, is_locked: false, locked_until: null, failed_attempts: 0 };
    }
    if (isLockedNow(user)) {
      const tenantId = user.active_tenant_id;
      await d.events?.emit(db, {
        eventKey: 'user.sign_in_failed',
        tenantId,
        entity: { type: 'user', id: user.id },
        data: { userId: user.id, email: user.email, tenantId, reason: 'locked' },
      });
      await passwords.decoy(s.body.password);
      const why = 'The user is locked; ask an administrator to unlock it or wait for the lock to expire';
      throw new AppError('USER_LOCKED', why);
    }
    // A migrated user whose hash is absent or of a format Gatehouse cannot verify must set a password: the reset
    // flow, never a silent failure. Only users marked so at migration.
    const verifiable = user.password_hash && hasherFor(user.password_hash);
    if (user.must_reset_password && !verifiable)
      return resetAnswer(db, d.resetTokens, user, 'migrated-without-password');
  }

  /** credentials: the password, its rotation rule and, for an imported or old hash, the rehash. */
  async function verify(s: PasswordSignIn): Promise<Answer | void> {
    const user = had(s.user, 'the user');
    const { ok, needsRehash } = await passwords.verify(s.body.password, user.password_hash);
    if (!ok) {
      await d.registerFailure(user, { ip: s.client.ip, identifier: had(s.identifier, 'the identifier') });
      throw new AppError('INVALID_LOGIN');
    }
    // Password rotation: the rule of the user's active account (else the environment's; cached in process) against
    // when the password was set (users.password_changed_at, read with the user). An expired one gets the reset answer.
    const account = user.active_tenant_id ?? had(s.view, 'the view').memberships[0]?.tenant_id;
    const rule = await passwords.rotation.forAccount(db, account);
    s.rotation = passwords.rotation.status(rule, user.password_changed_at);
    if (s.rotation?.expired) return resetAnswer(db, d.resetTokens, user, 'password-expired');
    // An imported hash of another format is replaced by our own (the password was right; kept even if a gate refuses).
    if (needsRehash) await rehashPassword(db, user.id, await passwords.hash(s.body.password));
  }

  /** auth: the account, the sign-in gates and the one statement that starts the sign-in (login.service.ts). */
  async function session(s: PasswordSignIn): Promise<void> {
    const user = had(s.user, 'the user');
    const view = had(s.view, 'the view');
    const { invitationToken } = s.body;
    const join = d.inviteJoin;
    // An account invite token (invitations module): the user joins that account and signs in to it, in one
    // transaction.
    // Otherwise no transaction (docs/decisions.md, "Sign-in without a transaction"): the reads were made with the
    // user, the gates need no statement unless they challenge, and the sign-in starts with one statement.
    s.out =
      invitationToken && join
        ? await db.transaction(async (tx) => {
            const tenantId = await join(tx, user, invitationToken);
            return d.signInUser(tx, user, s.client, ['pwd'], { tenantId }, s.used);
          })
        : await d.signInUser(
            db,
            user,
            s.client,
            ['pwd'],
            {
              memberships: view.memberships,
              prefetched: view.gates,
              version: view.version,
            },
            s.used,
          );
    // Audit entries the sign-in's statements stored (client.audit) are committed: the hook must not stage them again.
    for (const e of s.client.inlined ?? []) e.stored();
  }

  /** auth: the tokens (or the challenge) and, close to expiry, how long the password has left and its notice period. */
  async function answer(s: PasswordSignIn): Promise<Answer> {
    const out = had(s.out, 'the tokens') as LoginResponse;
    const rotation = s.rotation;
    if (rotation && !rotation.expired && 'accessToken' in out) {
      const { passwordExpiresIn, notificationPeriod } = rotation;
      return { ...out, passwordExpiresIn, notificationPeriod } as LoginResponse;
    }
    return out;
  }

  return [
    { name: 'read', run: read },
    { name: 'gates', run: gates },
    { name: 'verify', run: verify },
    { name: 'session', run: session },
    { name: 'answer', run: answer },
  ];
}
