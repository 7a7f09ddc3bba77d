import { AppError } from '../../http/errors.ts';
import { isLockedNow } from '../users/index.ts';
import type { RefreshDeps } from './refresh.service.ts';
import type { ClientInfo } from './sign-in.types.ts';
import * as store from './store.ts';

/**
 * The checks a live session passes before it gets a new access token (the refresh, and the re-issue of
 * reissue.service.ts): not ended (an ended one is revoked), its user present and not locked, the membership of its
 * account still live (else the session is revoked), the gates at the 'refresh' stage. `gone` is the error of a session
 * that ended or whose user is gone (the refresh answers INVALID_REFRESH_TOKEN, the re-issue SESSION_REVOKED).
 */
export async function checkSessionAccess(
  deps: Pick<RefreshDeps, 'db' | 'users' | 'sessions' | 'runGates'>,
  view: store.RefreshView,
  client: ClientInfo,
  gone: 'INVALID_REFRESH_TOKEN' | 'SESSION_REVOKED',
) {
  const { db } = deps;
  const { session } = view;
  const ended = await deps.sessions.isExpired(db, session, { idleTimeoutSeconds: view.idleTimeoutSeconds });
  if (ended) {
    await store.revoke(db, { sessionId: session.id }, ended);
    throw new AppError(gone, `The session ended (${ended})`);
  }
  const user = view.user;
  if (!user) throw new AppError(gone, 'The user of this session no longer exists');
  if (isLockedNow(user)) throw new AppError('USER_LOCKED');
  const access = await deps.users.accessView(db, user.id, view.memberships);
  const membership = await access.accessTo(session.tenant_id);
  if (!membership) {
    await store.revoke(db, { sessionId: session.id }, 'account access removed');
    throw new AppError('NO_ACCOUNT_ACCESS', 'The user no longer has access to the account of this session');
  }
  await deps.runGates(db, { stage: 'refresh', user, tenantId: session.tenant_id, client, amr: session.amr });
  return { user, membership, tenantIds: access.tenantIds };
}
