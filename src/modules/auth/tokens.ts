import type { Queryable } from '../../storage/db.ts';
import type { EnvironmentService, VendorSettings } from '../environment/index.ts';
import type { KeysService } from '../keys/index.ts';
import type { RolesService } from '../roles/index.ts';
import type { MembershipRow, UserRow } from '../users/index.ts';
import { tokenRoleClaims } from './store.ts';

export interface LoginResponse {
  tokenType: 'bearer';
  accessToken: string;
  refreshToken: string;
  expiresIn: number;
  expires: string;
  mfaRequired: false;
  userId: string;
  userEmail: string;
  emailVerified: boolean;
}

/** The reset flow (wire.md section 4): the user must set a password first; no tokens are issued. */
export interface ResetPasswordResponse {
  mfaRequired: false;
  resetPasswordToken: string;
  userId: string;
  userEmail: string;
  emailVerified: boolean;
}

/**
 * Signs user access tokens with the claims of wire.md section 3, roles and permissions of the acting account. The
 * caller may pass the environment settings it has already read in this transaction.
 */
/** Adds role ids to a user's token beyond the membership's own (e.g. the roles of the user's groups). */
export type RoleSource = (q: Queryable, a: { userId: string; tenantId: string }) => Promise<string[]>;
/** Adds claims to a user's access token (e.g. `act` for delegation, `acr`); cannot replace the core claims. */
export type ClaimSource = (q: Queryable, a: { userId: string; tenantId: string; sessionId: string; amr: string[] }) => Promise<Record<string, unknown>>;

export function createTokenIssuer(deps: { keys: KeysService; roles: RolesService; environment: EnvironmentService }) {
  const roleSources: RoleSource[] = [];
  const claimSources: ClaimSource[] = [];
  const issue = async function issue(
    q: Queryable,
    a: { user: UserRow; tenantId: string; membership: MembershipRow; tenantIds: string[]; sessionId: string; amr: string[]; authTime: Date },
    known?: { settings?: VendorSettings },
  ): Promise<{ accessToken: string; expiresIn: number }> {
    const settings = known?.settings ?? (await deps.environment.settings(q));
    // Role keys and permission keys in one statement (the role records themselves are not needed here).
    let roleIds = a.membership.role_ids;
    for (const source of roleSources) roleIds = [...new Set([...roleIds, ...(await source(q, { userId: a.user.id, tenantId: a.tenantId }))])];
    const { roles, permissions } = await tokenRoleClaims(q, roleIds);
    let extra: Record<string, unknown> = {};
    for (const source of claimSources) extra = { ...extra, ...(await source(q, { userId: a.user.id, tenantId: a.tenantId, sessionId: a.sessionId, amr: a.amr })) };
    const ttl = settings.defaultTokenExpiration;
    const accessToken = await deps.keys.sign(
      {
        ...extra,
        type: 'userToken',
        sub: a.user.id,
        email: a.user.email,
        email_verified: a.user.verified,
        name: a.user.name,
        profilePictureUrl: a.user.profile_picture_url ?? '',
        tenantId: a.tenantId,
        tenantIds: a.tenantIds,
        roles,
        permissions,
        metadata: a.user.metadata ?? {},
        sid: a.sessionId,
        aud: deps.environment.id,
        amr: a.amr,
        auth_time: Math.floor(a.authTime.getTime() / 1000),
      },
      ttl,
    );
    return { accessToken, expiresIn: ttl };
  };
  return Object.assign(issue, {
    addRoleSource: (s: RoleSource) => void roleSources.push(s),
    addClaimSource: (s: ClaimSource) => void claimSources.push(s),
    /** The extra role ids the role sources give a user in an account (machine tokens acting as a user need them). */
    extraRoleIds: async (q: Queryable, a: { userId: string; tenantId: string }): Promise<string[]> => {
      const ids = new Set<string>();
      for (const source of roleSources) for (const id of await source(q, a)) ids.add(id);
      return [...ids];
    },
  });
}
export type TokenIssuer = ReturnType<typeof createTokenIssuer>;
