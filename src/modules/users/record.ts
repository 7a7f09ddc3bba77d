import { iso } from '../../lib/time.ts';
import type { Queryable } from '../../storage/db.ts';
import type { RolesService } from '../roles/index.ts';
import { groupsOfUsers } from '../groups/index.ts';
import type { User } from './schema.ts';
import * as phoneStore from './phones.store.ts';
import * as store from './store.ts';

/** Sub-account access of a membership: forced on when its account says alwaysOn. */
export const subAccess = (m: store.MembershipRow) =>
  m.sub_account_access_type === 'alwaysOn' || m.sub_account_access_allowed;

/** The account a user acts in by default: the stored active one if still a membership, else the oldest accepted one. */
export function activeMembership(user: store.UserRow, ms: store.MembershipRow[]): store.MembershipRow | undefined {
  return ms.find((m) => m.tenant_id === user.active_tenant_id && !m.pending) ?? ms.find((m) => !m.pending) ?? ms[0];
}

/**
 * Builds the User record of interface section 2 in four queries, in two rounds of two independent ones (memberships
 * with role ids and phones; then the roles with their permissions and the current account's permissions), so a
 * pooled PostgreSQL answers each pair at once (PGlite and a transaction run them one after the other). `tenantId`
 * picks the account whose roles and permissions fill `roles`/`permissions`.
 */
export async function buildUserRecord(
  q: Queryable,
  roles: RolesService,
  user: store.UserRow,
  tenantId?: string,
  known?: { groups?: Awaited<ReturnType<typeof groupsOfUsers>> },
): Promise<User> {
  // `known.groups`: a list page reads the groups of all its users in one statement (groupsOfUsers) and passes them in.
  const [ms, phoneList, groupMap] = await Promise.all([
    store.memberships(q, user.id),
    phoneStore.numbersOf(q, user.id),
    known?.groups ?? groupsOfUsers(q, [user.id]),
  ]);
  const current = (tenantId ? ms.find((m) => m.tenant_id === tenantId) : undefined) ?? activeMembership(user, ms);
  const allRoleIds = [...new Set(ms.flatMap((m) => m.role_ids))];
  const [roleRecords, permissions] = await Promise.all([
    allRoleIds.length ? roles.rolesByIds(q, allRoleIds) : [],
    current && current.role_ids.length ? roles.permissionsOfRoles(q, current.role_ids) : [],
  ]);
  const byId = new Map(roleRecords.map((r) => [r.id, r]));
  const rolesOf = (m: store.MembershipRow) => m.role_ids.map((id) => byId.get(id)).filter((r) => r !== undefined);
  return {
    id: user.id,
    // The vendor SDK declares `email: string`: an email-less user's record says '' (as profilePictureUrl does).
    email: user.email ?? '',
    name: user.name,
    username: user.username,
    profilePictureUrl: user.profile_picture_url ?? '',
    sub: user.id,
    verified: user.verified,
    mfaEnrolled: user.mfa_enrolled,
    mfaBypass: user.mfa_bypass,
    ...(phoneList[0] ? { phoneNumber: phoneList[0] } : {}),
    phoneNumbers: phoneList,
    roles: current ? rolesOf(current) : [],
    permissions,
    provider: user.provider,
    tenantId: current?.tenant_id ?? '',
    tenantIds: ms.filter((m) => !m.pending).map((m) => m.tenant_id),
    activatedForTenant: current ? !current.is_disabled : false,
    isLocked: isLockedNow(user),
    tenants: ms.map((m) => ({
      tenantId: m.tenant_id,
      roles: rolesOf(m),
      ...(m.temporary_expiration_date ? { temporaryExpirationDate: iso(m.temporary_expiration_date)! } : {}),
      isDisabled: m.is_disabled,
      subAccountAccessAllowed: subAccess(m),
      ...(m.pending ? { pending: true } : {}),
    })),
    invisible: user.invisible,
    superUser: user.super_user,
    metadata: JSON.stringify(user.metadata ?? {}),
    vendorMetadata: JSON.stringify(user.vendor_metadata ?? {}),
    externalId: user.external_id,
    createdAt: iso(user.created_at)!,
    lastLogin: iso(user.last_login),
    groups: (groupMap.get(user.id) ?? [])
      .filter((g) => g.tenantId === current?.tenant_id)
      .map(({ tenantId: _t, ...g }) => g),
    subAccountAccessAllowed: current ? subAccess(current) : false,
    managedBy: user.managed_by,
  };
}

/**
 * What names a user in rate limits, labels and audit displays: the email, else the username (a user who signed up
 * with a username may have no email), else the id.
 */
export const userLabel = (u: Pick<store.UserRow, 'id' | 'email' | 'username'>): string => u.email ?? u.username ?? u.id;

/** Locked by an administrator (no expiry) or by the lockout policy until `locked_until`. */
export function isLockedNow(user: Pick<store.UserRow, 'is_locked' | 'locked_until'>, now = new Date()): boolean {
  return user.is_locked && (user.locked_until === null || user.locked_until > now);
}

/**
 * A user record as an account sees it (a user token's view; the environment sees the record whole): only what belongs
 * to `tenantId`, never the user's other accounts, their roles there, or vendor metadata. For an invitee who has not
 * accepted yet (pending membership), only the id, email, name and the pending invitation with its roles here.
 */
export function scopeToAccount(rec: User, tenantId: string): User {
  const mine = rec.tenants.find((t) => t.tenantId === tenantId);
  if (mine?.pending) {
    return {
      id: rec.id,
      sub: rec.sub,
      email: rec.email,
      name: rec.name,
      username: null,
      profilePictureUrl: '',
      verified: false,
      mfaEnrolled: false,
      mfaBypass: false,
      phoneNumbers: [],
      roles: mine.roles,
      permissions: [],
      provider: '',
      tenantId,
      tenantIds: [],
      activatedForTenant: false,
      isLocked: false,
      tenants: [mine],
      invisible: false,
      superUser: false,
      metadata: '{}',
      vendorMetadata: '{}',
      externalId: null,
      createdAt: rec.createdAt,
      lastLogin: null,
      groups: [],
      subAccountAccessAllowed: false,
      managedBy: rec.managedBy,
      invitationPending: true,
    };
  }
  // The record's roles, permissions and groups are those of `rec.tenantId`: another account's are dropped.
  const other =
    rec.tenantId !== tenantId
      ? { tenantId, roles: [], permissions: [], groups: [], activatedForTenant: false, subAccountAccessAllowed: false }
      : {};
  return { ...rec, ...other, tenantIds: mine ? [tenantId] : [], tenants: mine ? [mine] : [], vendorMetadata: '{}' };
}
