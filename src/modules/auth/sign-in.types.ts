import type { Queryable } from '../../storage/db.ts';
import type { VendorSettings } from '../environment/index.ts';
import type { MembershipRow, UserRow, UsersService } from '../users/index.ts';
import type { InlineAudit } from '../audit/index.ts';
import type * as store from './store.ts';
import type { LoginResponse, RoleClaims } from './tokens.ts';

// The types of sign-in (login.service.ts) and refresh-token rotation (refresh.service.ts); other modules get them from index.ts.

export interface ClientInfo {
  ip?: string;
  userAgent?: string;
  /** The request's Cookie header (gates read their own cookies, e.g. the MFA remember-device cookie). */
  cookie?: string;
  /**
   * The request's audit entry for the answer with this body (`req.auditInline` bound to the route's success status),
   * when the route lets the sign-in's statements store it (the session start, the MFA challenge): one round trip fewer.
   * Entries so stored are pushed to `inlined`; the flow that owns the transaction calls their `stored()` after COMMIT.
   */
  audit?: (body: Record<string, unknown>) => InlineAudit | undefined;
  inlined?: InlineAudit[];
}

/**
 * A check every sign-in passes before a session starts (and every refresh before rotation). Gates are added by the
 * modules that own the rule (MFA, IP restrictions, ...). A gate throws an AppError to refuse, or (at `login` only)
 * returns a challenge that is answered instead of tokens (e.g. `{mfaRequired: true, mfaToken}`); the flow that
 * answers the challenge later calls `signIn` with the gate's name in `satisfied`.
 */
export interface GateInput {
  stage: 'login' | 'refresh';
  user: UserRow;
  tenantId: string;
  client: ClientInfo;
  /** Methods used so far, e.g. ['pwd'], ['otp'], ['sso']. */
  amr: string[];
  /**
   * The value of the gate's `prefetch` (GateSpec), when the flow read it with the user (password sign-in); undefined
   * when it did not, and the gate reads what it needs itself.
   */
  prefetched?: unknown;
  /**
   * The user's memberships and the user row's version (`xmin`) as the flow read them with the user (password
   * sign-in; SignInOptions), for a gate that keeps what it read for a later step (the MFA challenge's snapshot).
   */
  memberships?: (MembershipRow & { live: boolean })[];
  version?: string;
}
export type SignInGate = (q: Queryable, a: GateInput) => Promise<void | Record<string, unknown>>;
/**
 * A gate as the login service is given it (createAuth's `gates`, in the order they run: a gate that refuses, such as
 * activation, before one that challenges, such as MFA, so no second factor is asked in vain).
 * `stable`: once the gate lets a user pass, it always will (it reads no request data and its rule cannot return,
 * e.g. activation); a sign-in that `resumes` a later gate's challenge does not run it again.
 * `prefetch`: a SQL expression over the user's id that the password sign-in reads with the user (store.signInView);
 * its value reaches the gate as `GateInput.prefetched`.
 */
export interface GateSpec {
  name: string;
  gate: SignInGate;
  stable?: boolean;
  prefetch?: (userExpr: string) => string;
}
/** Joins the account of an account invite token (a password sign-in with `invitationToken`); answers its id. */
export type InviteJoin = (q: Queryable, user: UserRow, token: string) => Promise<string>;
export interface SignInOptions {
  /** Sign in to this account (must be an active membership); default: the active one or the first that works. */
  tenantId?: string;
  /** Names of gates already satisfied by this flow (e.g. 'mfa' after the second factor). */
  satisfied?: string[];
  /**
   * The gate whose challenge this sign-in answers (the MFA verify routes: 'mfa'). That challenge was issued only after
   * every gate before it passed for this user, so gates added as `stable` before it are not run again (gates that
   * depend on the request, such as IP restrictions, run again). Implies `satisfied` for that gate.
   */
  resumes?: string;
  /** The user's memberships as `membershipsWithStateSql` reads them, when the flow read them in a larger statement (MFA verify). */
  memberships?: (MembershipRow & { live: boolean })[];
  /** The gates' prefetched values by gate name (store.signInView), when the flow read them with the user. */
  prefetched?: Record<string, unknown>;
  /** The user row's version (`xmin`) read with the user and the memberships (store.signInView). */
  version?: string;
  /**
   * The flow's own writes, made by the session-start statement (the MFA verify's TOTP step and mfaToken spent). When
   * they did not happen, the statement raises (see SessionGuard.check) and nothing of the sign-in is written.
   */
  guard?: store.SessionGuard;
}

/** Filled in by `login` and `refresh` with the environment settings they read, so the caller need not read them again. */
export interface UsedSettings {
  settings?: VendorSettings;
}

/**
 * Signs the access token and answers the tokens for a session (the login service's `respond`, which the refresh flow
 * is given). `known`: what the caller already read (account ids, settings, role claims).
 */
export type Respond = (
  q: Queryable,
  user: UserRow,
  tenantId: string,
  membership: NonNullable<Awaited<ReturnType<UsersService['accessTo']>>>,
  sessionId: string,
  refreshToken: string,
  amr: string[],
  authTime: Date,
  known?: { tenantIds?: string[]; settings?: VendorSettings; claims?: RoleClaims },
  used?: UsedSettings,
) => Promise<LoginResponse>;

/**
 * Stores a one-time password-reset token (its SHA-256) that the password-reset route redeems. The recovery module
 * owns the tokens (it depends on auth, so auth cannot import it; src/context.ts passes its statement in).
 */
export type ResetTokenStore = (
  q: Queryable,
  t: {
    userId: string;
    tokenHash: string;
    reason: 'migrated-without-password' | 'password-expired';
    ttlSeconds: number;
  },
) => Promise<void>;
