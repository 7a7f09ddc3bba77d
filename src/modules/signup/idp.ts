import type { Queryable } from '../../storage/db.ts';
import type { EventsService } from '../events/index.ts';
import { voidCodes } from '../passwordless/index.ts';
import { updateUser, type UserRow } from '../users/index.ts';
import * as store from './store.ts';

/**
 * An identity provider (SSO or social login) vouched for the email of a user who signed up and never activated: the
 * mailbox is proven, so the user is activated (verified, no longer pending, earlier activation links/codes void) and
 * `user.activated` is emitted. The password chosen at sign-up is dropped: nobody had proven the mailbox when it was
 * set, so it may be an attacker's who registered the victim's email first (pre-account hijacking). The user sets a
 * password later through the reset flow if they want one. Answers the user as it now is (unchanged when not pending).
 */
export async function activateByIdentityProvider(
  q: Queryable,
  events: Pick<EventsService, 'emit'>,
  user: UserRow,
  via: string,
): Promise<UserRow> {
  if (!(await store.clearPending(q, user.id))) return user;
  await updateUser(q, user.id, { verified: true, password_hash: null });
  await voidCodes(q, user.id, 'activation');
  await events.emit(q, {
    eventKey: 'user.activated',
    tenantId: user.active_tenant_id,
    entity: { type: 'user', id: user.id },
    data: { userId: user.id, email: user.email, via },
  });
  return { ...user, verified: true, password_hash: null };
}
