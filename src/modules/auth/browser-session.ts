import { AppError } from '../../http/errors.ts';
import { sha256Hex } from '../../lib/crypto.ts';
import type { UserRow } from '../users/index.ts';
import type { ReissueDeps } from './reissue.service.ts';
import { checkSessionAccess } from './session-access.ts';
import type { ClientInfo } from './sign-in.types.ts';
import * as store from './store.ts';

/** Who a browser is signed in as: the live session behind its refresh cookie. */
export interface BrowserSession {
  sessionId: string;
  user: UserRow;
  tenantId: string;
  tenantIds: string[];
  authTime: Date;
  amr: string[];
}

/**
 * The session of a browser's refresh cookie (gh_refresh), read without rotating it: the hosted pages and the OpenID
 * provider's interactions ask "who is signed in here" on every page, and a rotation per page view would race
 * between tabs. Same checks as a refresh (session-access.ts); a session that fails them is simply no session.
 */
export function createBrowserSessions(deps: ReissueDeps) {
  return async function browserSession(
    refreshToken: string | undefined,
    client: ClientInfo = {},
  ): Promise<BrowserSession | undefined> {
    if (!refreshToken) return undefined;
    const view = await store.refreshView(deps.db, sha256Hex(refreshToken));
    if (!view || view.session.revoked_at || view.session.rotated_at) return undefined;
    try {
      const { user, tenantIds } = await checkSessionAccess(deps, view, client, 'SESSION_REVOKED');
      const s = view.session;
      return { sessionId: s.id, user, tenantId: s.tenant_id, tenantIds, authTime: s.auth_time, amr: s.amr };
    } catch (err) {
      if (err instanceof AppError && err.status < 500) return undefined;
      throw err;
    }
  };
}
