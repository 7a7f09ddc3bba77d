import { AppError } from '../../http/errors.ts';
import { isUuid } from '../../lib/pg-errors.ts';
import type { RefreshDeps } from './refresh.service.ts';
import { checkSessionAccess } from './session-access.ts';
import type { ClientInfo } from './sign-in.types.ts';
import * as store from './store.ts';

/** The refresh flow's dependencies but `respond` (a re-issue answers only the access token). */
export type ReissueDeps = Omit<RefreshDeps, 'respond'>;

/** A fresh access token of a session: the token alone, no refresh token. */
export interface ReissuedToken {
  accessToken: string;
  expiresIn: number;
  expires: string;
}

/** Access-token re-issue for a live session: the login service's `reissue`. */
export function createReissue(deps: ReissueDeps) {
  const { db } = deps;

  /**
   * The token input of the live session `sessionId`: its user, account (the session's), roles and permissions now,
   * `amr`/`auth_time` as the session holds them. The checks are the refresh's (session-access.ts); the session is
   * touched. `opts.userId`, when given, must be the session's user (the caller's token names both).
   */
  async function sessionInput(
    sessionId: string,
    opts: { userId?: string; client?: ClientInfo; applicationId?: string },
  ) {
    const view = isUuid(sessionId) ? await store.sessionView(db, sessionId) : undefined;
    if (!view || (opts.userId && view.session.user_id !== opts.userId))
      throw new AppError('SESSION_REVOKED', 'The token belongs to no live session');
    const { session } = view;
    if (session.revoked_at) throw new AppError('SESSION_REVOKED');
    const { user, membership, tenantIds } = await checkSessionAccess(deps, view, opts.client ?? {}, 'SESSION_REVOKED');
    const settings = await deps.environment.cachedSettings(db);
    // One statement: the session touched (if still not revoked) and the token's role claims read.
    const claims = await store.touchWithClaims(
      db,
      session.id,
      await deps.issue.claimsSql(db, { userId: user.id, tenantId: session.tenant_id, roleIds: membership.role_ids }),
    );
    if (!claims) throw new AppError('SESSION_REVOKED');
    const input = {
      user,
      tenantId: session.tenant_id,
      membership,
      tenantIds,
      sessionId: session.id,
      amr: session.amr,
      authTime: session.auth_time,
      applicationId: opts.applicationId,
    };
    return { input, known: { settings, claims } };
  }

  /** A fresh access token for the session `sessionId` (sessionInput), with the same `sid`. */
  async function reissue(
    sessionId: string,
    opts: { userId?: string; client?: ClientInfo } = {},
  ): Promise<ReissuedToken> {
    const { input, known } = await sessionInput(sessionId, opts);
    const { accessToken, expiresIn } = await deps.issue(db, input, known);
    return { accessToken, expiresIn, expires: new Date(Date.now() + expiresIn * 1000).toISOString() };
  }

  /** The claims such a token carries, unsigned (without iss, iat, exp), and its lifetime in seconds. */
  async function sessionClaims(
    sessionId: string,
    opts: { userId?: string; client?: ClientInfo; applicationId?: string } = {},
  ) {
    const { input, known } = await sessionInput(sessionId, opts);
    return deps.issue.claims(db, input, known);
  }

  return Object.assign(reissue, { sessionClaims });
}
