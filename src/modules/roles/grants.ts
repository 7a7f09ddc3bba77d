import type { AuthContext } from '../../http/auth.ts';
import { AppError } from '../../http/errors.ts';
import { holdsPermission } from '../../lib/permissions.ts';
import type { Queryable } from '../../storage/db.ts';
import { bestLevelOfKeys, rolesWithPermissionKeys, type GrantedRoleRow } from './grants.store.ts';

/**
 * Who gives or takes away roles: the environment (unrestricted), or a user token (machine tokens acting for an
 * account or a user included) with the permissions and role keys it carries in its account `tenantId`.
 */
export type Grantor = { kind: 'vendor' } | UserGrantor;
export interface UserGrantor {
  kind: 'user';
  userId: string;
  tenantId: string;
  permissions: readonly string[];
  roleKeys: readonly string[];
}

/** The grantor of a request, from what the guard authenticated. */
export function grantorOf(auth: AuthContext): Grantor {
  if (auth.kind === 'vendor') return { kind: 'vendor' };
  const { userId, tenantId, permissions, roles } = auth;
  return { kind: 'user', userId, tenantId, permissions, roleKeys: roles };
}

/** A user grantor's level: their most privileged role's in their account; null when they hold no role. */
export const grantorLevel = (q: Queryable, g: UserGrantor): Promise<number | null> =>
  bestLevelOfKeys(q, g.tenantId, g.roleKeys);

export type GrantVerb = 'grant' | 'take away';

/**
 * 403 ROLE_NOT_GRANTABLE naming the roles of `rows` beyond a user grantor: a permission they do not hold (wildcards
 * count), or a level above theirs. Lower level numbers are more privileged (the seeded admin is 0); a grantor's level
 * is their most privileged role's, and a grantor without roles ranks below every role.
 */
export async function assertWithin(q: Queryable, g: Grantor, rows: GrantedRoleRow[], field: string, verb: GrantVerb) {
  if (g.kind === 'vendor' || rows.length === 0) return;
  const level = await grantorLevel(q, g);
  const held = (r: GrantedRoleRow) => r.permission_keys.every((k) => holdsPermission(g.permissions, k));
  const beyond = rows.filter((r) => level === null || r.level < level || !held(r));
  if (beyond.length === 0) return;
  const keys = [...new Set(beyond.map((r) => r.key))];
  const rank = level === null ? 'you hold no role' : `your level is ${level}; lower numbers rank higher`;
  throw new AppError(
    'ROLE_NOT_GRANTABLE',
    `${field}: roles you may not ${verb}: ${keys.join(', ')} (a user may ${verb} only roles whose every permission ` +
      `they hold and whose level is not above their own; ${rank})`,
    { field, roleKeys: keys },
  );
}

/** The grant rule for the roles service: `assertGrantable` checks ids first, `assertRevocable` skips unknown ones. */
type InReach = (q: Queryable, ids: string[], field: string, scope: string) => Promise<unknown>;

export function createGrants(inReach: InReach) {
  async function existing(q: Queryable, tenantId: string, g: Grantor, ids: string[], field: string, verb: GrantVerb) {
    if (g.kind === 'vendor' || ids.length === 0) return;
    const inScope = (r: GrantedRoleRow) => r.tenant_id === null || r.tenant_id === tenantId;
    const rows = (await rolesWithPermissionKeys(q, ids)).filter(inScope);
    await assertWithin(q, g, rows, field, verb);
  }
  return {
    /**
     * May `grantor` give the roles of `roleIds` in account `tenantId` (directly, or through anything that later
     * assigns them)? 400 UNKNOWN_IDS for ids naming no role of that account's reach; 403 for roles beyond the grantor.
     */
    async assertGrantable(q: Queryable, tenantId: string, g: Grantor, roleIds: string[], field = 'roleIds') {
      if (roleIds.length === 0) return;
      await inReach(q, roleIds, field, tenantId);
      await assertWithin(q, g, await rolesWithPermissionKeys(q, roleIds), field, 'grant');
    },
    /** May `grantor` take the roles of `roleIds` away? Ids naming no role (of the account's reach) are skipped. */
    assertRevocable: (q: Queryable, tenantId: string, grantor: Grantor, roleIds: string[], field = 'roleIds') =>
      existing(q, tenantId, grantor, roleIds, field, 'take away'),
    /** As assertGrantable for roles already in place (a group's, when members join): unknown ids are skipped. */
    assertGrantableExisting: (q: Queryable, tenantId: string, grantor: Grantor, roleIds: string[], field: string) =>
      existing(q, tenantId, grantor, roleIds, field, 'grant'),
  };
}
