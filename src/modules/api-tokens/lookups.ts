import type { Queryable } from '../../storage/db.ts';
import { IMPERSONATION_AMR } from './delegation.service.ts';
import * as store from './store.ts';

// What the sign-in (auth) reads of token_acts, lent to it by the composition root: this module issues its tokens
// through auth, so auth cannot import it.

/** Whether an impersonation or delegation token's act (its `sid`) is live for the user and account (liveness). */
export const actLive = (q: Queryable, actId: string, userId: string, tenantId: string) =>
  store.actLive(q, actId, userId, tenantId);

/**
 * The `act` claim of a token issued for an impersonation (a claim source of the issuer, called at every user-token
 * issue; it reads only when the amr marks an impersonation, so ordinary sign-ins pay nothing).
 */
export async function impersonationClaims(
  q: Queryable,
  a: { sessionId: string; amr: string[] },
): Promise<Record<string, unknown>> {
  if (!a.amr.includes(IMPERSONATION_AMR)) return {};
  const act = await store.findAct(q, a.sessionId);
  return act ? { act: { sub: act.actor_id, type: act.actor_type } } : {};
}
