import type { FailedAttempt } from './sign-in-limits.ts';
import { checkIdentity, type UserAuth } from '../../http/auth.ts';
import { AppError } from '../../http/errors.ts';
import { randomSecret, sha256Hex } from '../../lib/crypto.ts';
import { isUuid } from '../../lib/pg-errors.ts';
import { hasherFor, type PasswordService } from '../credentials/index.ts';
import type { UserRow } from '../users/index.ts';
import type { RefreshDeps } from './refresh.service.ts';
import { checkSessionAccess } from './session-access.ts';
import type { ClientInfo, UsedSettings } from './sign-in.types.ts';
import * as store from './store.ts';
import type { LoginResponse } from './tokens.ts';

/** Checks a second-factor code of a user (the MFA module's authenticator app); throws when wrong or absent. */
export type StepUpFactor = (userId: string, code: string) => Promise<void>;

export interface StepUpDeps extends RefreshDeps {
  passwords: PasswordService;
  /** Counts a wrong password towards the lockout policy, as a failed sign-in does. */
  registerFailure: (user: UserRow, attempt: FailedAttempt) => Promise<void>;
  /** The sign-in limits (throws RATE_LIMITED). */
  limit: (ip: string | undefined, identifier: string) => Promise<void>;
  /** The second factor (the MFA module's authenticator app); without it only the password re-authenticates. */
  factor?: StepUpFactor;
}

/**
 * Re-authentication of a signed-in session (POST .../auth/v1/user/step-up/generate): the user proves who they are
 * again (password, or a code of their authenticator app) and the session's authentication time becomes now. The
 * answer is the login response for the same session (same sid), its refresh token rotated as a refresh does.
 */
export function createStepUp(deps: StepUpDeps) {
  const { db } = deps;

  return async function stepUp(
    auth: UserAuth,
    body: { password?: string; code?: string },
    client: ClientInfo = {},
    used?: UsedSettings,
  ): Promise<LoginResponse> {
    // Only the user's own session: machine, impersonation and delegated tokens cannot re-authenticate.
    checkIdentity(auth, false, 0);
    if ((body.password === undefined) === (body.code === undefined)) {
      throw new AppError(
        'VALIDATION',
        'Give exactly one of body.password (your password) and body.code (a code of your authenticator app)',
      );
    }
    const sessionId = auth.sessionId!;
    const view = isUuid(sessionId) ? await store.sessionView(db, sessionId) : undefined;
    if (!view || view.session.user_id !== auth.userId || view.session.revoked_at)
      throw new AppError('SESSION_REVOKED', 'The token belongs to no live session');
    const { session } = view;
    const { user, membership, tenantIds } = await checkSessionAccess(deps, view, client, 'SESSION_REVOKED');
    const identifier = (user.email ?? user.username ?? user.id).toLowerCase();
    await deps.limit(client.ip, identifier);
    if (body.password !== undefined) {
      if (!user.password_hash || !hasherFor(user.password_hash)) {
        throw new AppError(
          'STEP_UP_UNAVAILABLE',
          'The user has no password: re-authenticate by signing in again (SSO, social or passwordless)',
        );
      }
      const { ok } = await deps.passwords.verify(body.password, user.password_hash);
      if (!ok) {
        await deps.registerFailure(user, { ip: client.ip, identifier });
        throw new AppError('CURRENT_PASSWORD_INVALID', "body.password is not the user's password");
      }
    } else {
      const factor = deps.factor;
      if (!factor)
        throw new AppError(
          'STEP_UP_UNAVAILABLE',
          'Second-factor codes are not available: re-authenticate with body.password',
        );
      await factor(user.id, body.code!);
    }
    const settings = await deps.environment.cachedSettings(db);
    const next = randomSecret(32);
    const claimsSql = await deps.issue.claimsSql(db, {
      userId: user.id,
      tenantId: session.tenant_id,
      roleIds: membership.role_ids,
    });
    // The session records the factor just proven: a code of the authenticator app is a second factor (amr mfa +
    // otp, so the token's acr is multi-factor, as after an MFA sign-in); later refreshes keep it.
    const amr = [...new Set([...session.amr, ...(body.code === undefined ? ['pwd'] : ['mfa', 'otp'])])];
    const stepped = await store.stepUpWithClaims(
      db,
      { sessionId: session.id, userId: user.id, newHash: sha256Hex(next), amr },
      claimsSql,
    );
    if (!stepped) throw new AppError('SESSION_REVOKED');
    const { authTime, ...claims } = stepped;
    const known = { tenantIds, settings, claims };
    return deps.respond(
      db,
      { ...user, failed_attempts: 0 },
      session.tenant_id,
      membership,
      session.id,
      next,
      amr,
      authTime,
      known,
      used,
    );
  };
}
