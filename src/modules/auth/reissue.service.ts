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
   * A fresh access token for the session `sessionId` with the current roles and permissions of its account, the same
   * `sid`, and the `amr`/`auth_time` the session holds. The checks are the refresh's (session-access.ts); the refresh
   * token is not rotated. `opts.userId`, when given, must be the session's user (the caller's token names both).
   */
  async function reissue(
    sessionId: string,
    opts: { userId?: string; client?: ClientInfo } = {},
  ): Promise<ReissuedToken> {
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
    const { accessToken, expiresIn } = await deps.issue(
      db,
      {
        user,
        tenantId: session.tenant_id,
        membership,
        tenantIds,
        sessionId: session.id,
        amr: session.amr,
        authTime: session.auth_time,
      },
      { settings, claims },
    );
    return { accessToken, expiresIn, expires: new Date(Date.now() + expiresIn * 1000).toISOString() };
  }

  return reissue;
}
