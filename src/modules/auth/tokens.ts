import type { Queryable } from '../../storage/db.ts';
import type { EnvironmentService } from '../environment/index.ts';
import type { KeysService } from '../keys/index.ts';
import type { RolesService } from '../roles/index.ts';
import type { MembershipRow, UserRow } from '../users/index.ts';

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

/** Signs user access tokens with the claims of wire.md section 3, roles and permissions of the acting account. */
export function createTokenIssuer(deps: { keys: KeysService; roles: RolesService; environment: EnvironmentService }) {
  return async function issue(
    q: Queryable,
    a: { user: UserRow; tenantId: string; membership: MembershipRow; tenantIds: string[]; sessionId: string; amr: string[]; authTime: Date },
  ): Promise<{ accessToken: string; expiresIn: number }> {
    const settings = await deps.environment.settings(q);
    const roleIds = a.membership.role_ids;
    const [roles, permissions] = roleIds.length
      ? [await deps.roles.rolesByIds(q, roleIds), await deps.roles.permissionKeysOfRoles(q, roleIds)]
      : [[], []];
    const ttl = settings.defaultTokenExpiration;
    const accessToken = await deps.keys.sign(
      {
        type: 'userToken',
        sub: a.user.id,
        email: a.user.email,
        email_verified: a.user.verified,
        name: a.user.name,
        profilePictureUrl: a.user.profile_picture_url ?? '',
        tenantId: a.tenantId,
        tenantIds: a.tenantIds,
        roles: roles.map((r) => r.key),
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
}
export type TokenIssuer = ReturnType<typeof createTokenIssuer>;
