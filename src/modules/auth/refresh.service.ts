import { randomSecret, sha256Hex } from '../../lib/crypto.ts';
import { AppError } from '../../http/errors.ts';
import type { Db, Queryable } from '../../storage/db.ts';
import type { EnvironmentService } from '../environment/index.ts';
import type { UsersService } from '../users/index.ts';
import type { AuditInlineOf } from '../audit/index.ts';
import { checkSessionAccess } from './session-access.ts';
import type { SessionsService } from './sessions.service.ts';
import type { ClientInfo, GateInput, Respond, UsedSettings } from './sign-in.types.ts';
import * as store from './store.ts';
import type { LoginResponse, TokenIssuer } from './tokens.ts';

/** What the refresh flow needs; `runGates` and `respond` are the login service's own (login.service.ts). */
export interface RefreshDeps {
  db: Db;
  users: UsersService;
  environment: EnvironmentService;
  sessions: SessionsService;
  issue: TokenIssuer;
  /** Runs the sign-in gates (in order; at the 'refresh' stage a gate can only refuse, by throwing). */
  runGates: (q: Queryable, a: GateInput) => Promise<unknown>;
  /** Signs the access token and answers the tokens for a session. */
  respond: Respond;
}

/** Refresh-token rotation: the login service's `refresh`. */
export function createRefresh(deps: RefreshDeps) {
  const { db, respond } = deps;

  /**
   * Rotates the refresh token. A token already rotated is a replay: the whole session is revoked. `used`, when
   * given, receives the environment settings the refresh read (for the refresh cookie).
   *
   * No transaction (docs/decisions.md, "Refresh without a transaction"): one statement reads what the checks need,
   * one rotates. The rotation is conditional on the token being unrotated and its session live, so of two
   * concurrent uses of one token exactly one rotates; the other is answered as a replay, as a use after the
   * rotation is. The revocations (replay, expiry, access removed) are single statements of their own.
   */
  async function refresh(
    refreshToken: string,
    used?: UsedSettings,
    client: ClientInfo = {},
    audit?: AuditInlineOf,
  ): Promise<LoginResponse> {
    const hash = sha256Hex(refreshToken);
    // One statement: the session, its idle timeout, its user and the user's memberships.
    const view = await store.refreshView(db, hash);
    if (!view) throw new AppError('INVALID_REFRESH_TOKEN');
    const { session } = view;
    if (session.revoked_at) throw new AppError('SESSION_REVOKED');
    const replayed = async (): Promise<never> => {
      await store.revoke(db, { sessionId: session.id }, 'refresh token reuse');
      throw new AppError('SESSION_REVOKED', 'This refresh token was already used; the session is revoked');
    };
    if (session.rotated_at) return replayed();
    const { user, membership, tenantIds } = await checkSessionAccess(deps, view, client, 'INVALID_REFRESH_TOKEN');
    // Read before the rotation, so that nothing but signing is left once the token has rotated.
    const settings = await deps.environment.cachedSettings(db);
    const next = randomSecret(32);
    // One statement: the token rotated (if still unused), the session touched, the new access token's role claims read.
    const claimsSql = await deps.issue.claimsSql(db, {
      userId: user.id,
      tenantId: session.tenant_id,
      roleIds: membership.role_ids,
    });
    const entry = audit?.(201, { userId: user.id });
    const claims = await store.rotateWithClaims(
      db,
      { sessionId: session.id, oldHash: hash, newHash: sha256Hex(next) },
      claimsSql,
      entry,
    );
    // Not rotated: a concurrent request used this token first (or the session was revoked meanwhile; revoking again changes nothing).
    if (!claims) return replayed();
    // The entry is committed with the rotation; the audit hook must not stage it again whatever happens next.
    entry?.stored();
    return respond(
      db,
      user,
      session.tenant_id,
      membership,
      session.id,
      next,
      session.amr,
      session.auth_time,
      { tenantIds, settings, claims },
      used,
    );
  }

  return refresh;
}
