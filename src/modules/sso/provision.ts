import { AppError } from '../../http/errors.ts';
import type { Queryable } from '../../storage/db.ts';
import type { EventsService } from '../events/index.ts';
import type { RolesService } from '../roles/index.ts';
import type { TenantsService } from '../tenants/index.ts';
import { activateByIdentityProvider } from '../signup/index.ts';
import {
  addMembership,
  addRoles,
  createUserCreation,
  findByEmail,
  isMember,
  updateUser,
  type UserRow,
} from '../users/index.ts';

export interface ProvisionDeps {
  roles: RolesService;
  tenants: TenantsService;
  events: EventsService;
  /** Optional domain rule of the account (src/modules/restrictions); throws to refuse. */
  domainCheck?: (q: Queryable, tenantId: string, email: string) => Promise<void>;
}

export interface IdpIdentity {
  email: string;
  name?: string;
  picture?: string;
  provider: string;
  /** Role ids of the account for this user (defaults and group mappings resolved by the caller). */
  roleIds: string[];
  /** Whether the identity provider vouched for the email (default true); a new user is created with it. */
  verified?: boolean;
  /** The flow, for a new user's `user.created`: sso (default; an account's own IdP) or social (a social sign-up). */
  source?: 'sso' | 'social';
}

/**
 * Just-in-time provisioning into an account for an identity its own IdP asserted: a new user is created (verified
 * unless `who.verified` is false, `provider` = saml or the OIDC provider); a known user not yet a member joins the
 * account; a member gets the mapped roles added (never removed: roles given in Gatehouse stay). Runs in the caller's transaction.
 */
export async function provisionIntoAccount(
  tx: Queryable,
  deps: ProvisionDeps,
  tenantId: string,
  who: IdpIdentity,
): Promise<UserRow> {
  const email = who.email.trim().toLowerCase();
  const account = await deps.tenants.requireLive(tx, tenantId);
  let user = await findByEmail(tx, email);
  // Domain rules apply to new users of the account (a new user, or a known one joining), never to its members.
  const member = user ? await isMember(tx, tenantId, user.id) : false;
  if (deps.domainCheck && !member) await deps.domainCheck(tx, tenantId, email);
  const roleIds = who.roleIds.length ? who.roleIds : await deps.roles.defaultRoleIds(tx, tenantId);
  if (!user) {
    return createUserCreation(deps).create(tx, {
      source: who.source ?? 'sso',
      tenantId,
      email,
      name: who.name ?? '',
      profilePictureUrl: who.picture ?? null,
      verified: who.verified ?? true,
      provider: who.provider,
      roleIds,
      event: () => ({ provider: who.provider, via: 'sso' }),
    });
  }
  if (user.is_locked && (!user.locked_until || user.locked_until > new Date())) throw new AppError('USER_LOCKED');
  // The IdP vouched for the email: a user who signed up and never activated is activated (sign-up password dropped).
  user = await activateByIdentityProvider(tx, deps.events, user, who.provider);
  const joined = await addMembership(tx, tenantId, user.id, {
    subAccess: account.sub_account_access_type !== 'defaultOff',
    expiresAt: null,
  });
  await addRoles(tx, tenantId, user.id, roleIds);
  const values: Record<string, unknown> = {};
  if (!user.verified) values.verified = true;
  if (user.provider === 'local' && !user.password_hash) values.provider = who.provider;
  if (Object.keys(values).length) await updateUser(tx, user.id, values);
  if (joined)
    await deps.events.emit(tx, {
      eventKey: 'user.updated',
      tenantId,
      entity: { type: 'user', id: user.id },
      data: { userId: user.id, joinedAccount: tenantId, via: 'sso' },
    });
  return { ...user, ...values } as UserRow;
}
