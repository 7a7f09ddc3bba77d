import type { Queryable } from '../../storage/db.ts';
import type { EnvironmentService, VendorSettings } from '../environment/index.ts';
import type { KeysService } from '../keys/index.ts';
import { roleKeysSql, rolePermissionKeysSql, type RolesService } from '../roles/index.ts';
import type { MembershipRow, UserRow } from '../users/index.ts';
import { isUuid } from '../../lib/pg-errors.ts';
import { sql, type Sql } from '../../storage/sql.ts';
import { roleClaims } from './store.ts';

export interface LoginResponse {
  tokenType: 'bearer';
  accessToken: string;
  refreshToken: string;
  expiresIn: number;
  expires: string;
  mfaRequired: false;
  userId: string;
  userEmail?: string;
  emailVerified: boolean;
}

/** The reset flow (wire.md section 4): the user must set a password first; no tokens are issued. */
export interface ResetPasswordResponse {
  mfaRequired: false;
  resetPasswordToken: string;
  userId: string;
  userEmail?: string;
  emailVerified: boolean;
}

/** The login answer's `userEmail`/`emailVerified` (wire.md 4): `userEmail` is left out for a user without an email. */
export const emailOf = (u: Pick<UserRow, 'email' | 'verified'>) => ({
  ...(u.email ? { userEmail: u.email } : {}),
  emailVerified: u.verified,
});

/**
 * Signs user access tokens with the claims of wire.md section 3, roles and permissions of the acting account. The
 * caller may pass the environment settings it has already read in this transaction.
 */
/**
 * Adds role ids to a user's token beyond the membership's own (e.g. the roles of the user's groups). A source may
 * also carry `sql`: the same answer as a query of one uuid column, with `{tenant}` and `{user}` where the account id
 * (text) and the user id (uuid) go. Sign-in and refresh then fold it into the statement that computes the claims
 * (no statement of its own); the function still serves other callers (`extraRoleIds`).
 */
export type RoleSource = ((q: Queryable, a: { userId: string; tenantId: string }) => Promise<string[]>) & {
  sql?: string;
};

/** The roles and permission keys of an access token. */
export interface RoleClaims {
  roles: string[];
  permissions: string[];
}

/**
 * The role claims as part of a statement: `item` is the WITH item `claim_roles(id)`, `select` the select list giving
 * `roles` and `permissions` (storage/sql.ts fragments: the statement that embeds them numbers the parameters).
 */
export interface ClaimsSql {
  item: Sql;
  select: Sql;
}
const CLAIMS_SELECT = sql.raw(
  `${roleKeysSql('IN (SELECT id FROM claim_roles)', { globalFirst: true })} AS roles,
   ${rolePermissionKeysSql('IN (SELECT id FROM claim_roles)')} AS permissions`,
);
/** Adds claims to a user's access token (e.g. `act` for delegation, `acr`); cannot replace the core claims. */
export type ClaimSource = (
  q: Queryable,
  a: { userId: string; tenantId: string; sessionId: string; amr: string[] },
) => Promise<Record<string, unknown>>;

/**
 * The JWT template of a user access token (the jwt-templates module's targeting): claims added to the token (never the
 * core claims of wire.md section 3, which the source refuses to hold) and the token's lifetime in seconds.
 */
export type TokenTemplateSource = (
  q: Queryable,
  a: {
    userId: string;
    email: string | null;
    name: string;
    verified: boolean;
    profilePictureUrl: string | null;
    metadata: Record<string, unknown>;
    tenantId: string;
    tenantIds: string[];
    roleIds: readonly string[];
    roles: string[];
    permissions: string[];
    sessionId: string;
    aud: string;
    applicationId?: string;
  },
) => Promise<{ claims: Record<string, unknown>; expiration: number } | undefined>;

export function createTokenIssuer(deps: {
  keys: KeysService;
  roles: RolesService;
  environment: EnvironmentService;
  roleSources?: readonly RoleSource[];
  /** Further claims (ClaimSource), merged in this order. */
  claimSources?: readonly ClaimSource[];
  /** The JWT template chosen for a token, if any (TokenTemplateSource). */
  template?: TokenTemplateSource;
}) {
  const roleSources: readonly RoleSource[] = deps.roleSources ?? [];
  const claimSources: readonly ClaimSource[] = deps.claimSources ?? [];
  /**
   * The role claims of a user in an account as part of a statement (see ClaimsSql): the membership's role ids, the
   * role sources without SQL (run here) and those with SQL (in the statement).
   */
  async function claimsSql(
    q: Queryable,
    a: { userId: string; tenantId: string; roleIds: readonly string[] },
  ): Promise<ClaimsSql> {
    let roleIds = [...a.roleIds];
    for (const source of roleSources) {
      if (!source.sql)
        roleIds = [...new Set([...roleIds, ...(await source(q, { userId: a.userId, tenantId: a.tenantId }))])];
    }
    const named = { tenant: sql`${sql.param(a.tenantId)}::text`, user: sql`${sql.param(a.userId)}::uuid` };
    const parts = [sql`SELECT unnest(${roleIds.filter((id) => isUuid(id))}::uuid[]) AS id`];
    for (const source of roleSources) if (source.sql) parts.push(sql.fill(source.sql, named));
    return { item: sql`claim_roles AS (${sql.join(parts, ' UNION ')})`, select: CLAIMS_SELECT };
  }

  type IssueInput = {
    user: UserRow;
    tenantId: string;
    membership: MembershipRow;
    tenantIds: string[];
    sessionId: string;
    amr: string[];
    authTime: Date;
    /** The application the token is for, when the flow knows it (the OpenID provider's client): JWT targeting. */
    applicationId?: string;
  };
  type Known = { settings?: VendorSettings; claims?: RoleClaims };

  /** The claims of a user access token (without iss, iat, exp) and its lifetime. */
  async function claimsOf(q: Queryable, a: IssueInput, known?: Known) {
    const settings = known?.settings ?? (await deps.environment.settings(q));
    // Role keys and permission keys in one statement, role sources included (the role records are not needed here);
    // sign-in and refresh compute them in the statement that writes the session and pass them in `known.claims`.
    const { roles, permissions } =
      known?.claims ??
      (await roleClaims(
        q,
        await claimsSql(q, { userId: a.user.id, tenantId: a.tenantId, roleIds: a.membership.role_ids }),
      ));
    let extra: Record<string, unknown> = {};
    for (const source of claimSources)
      extra = {
        ...extra,
        ...(await source(q, { userId: a.user.id, tenantId: a.tenantId, sessionId: a.sessionId, amr: a.amr })),
      };
    // Impersonation and delegated tokens keep the default shape: their lifetime is bound to the act's own expiry.
    const acting = a.amr.includes('impersonation') || a.amr.includes('delegation');
    const template =
      deps.template && !acting
        ? await deps.template(q, {
            userId: a.user.id,
            email: a.user.email,
            name: a.user.name,
            verified: a.user.verified,
            profilePictureUrl: a.user.profile_picture_url,
            metadata: a.user.metadata ?? {},
            tenantId: a.tenantId,
            tenantIds: a.tenantIds,
            roleIds: a.membership.role_ids,
            roles,
            permissions,
            sessionId: a.sessionId,
            aud: deps.environment.id,
            applicationId: a.applicationId,
          })
        : undefined;
    const claims: Record<string, unknown> = {
      ...extra,
      type: 'userToken',
      sub: a.user.id,
      // The vendor's Node SDK declares `userId` on a user token's entity (IUser); apps read it.
      userId: a.user.id,
      // A user without an email (signed up with a username) has no `email` claim: the vendor's Node SDK declares
      // it optional on a user token (IUser), and OIDC leaves out a claim it has no value for.
      ...(a.user.email ? { email: a.user.email } : {}),
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
      // Last, so a template may reshape the profile claims; the source never holds a core claim.
      ...template?.claims,
    };
    return { claims, ttl: template?.expiration ?? settings.defaultTokenExpiration };
  }

  const issue = async function issue(
    q: Queryable,
    a: IssueInput,
    known?: Known,
  ): Promise<{ accessToken: string; expiresIn: number }> {
    const { claims, ttl } = await claimsOf(q, a, known);
    return { accessToken: await deps.keys.sign(claims, ttl), expiresIn: ttl };
  };
  return Object.assign(issue, {
    claimsSql,
    /** The claims `issue` signs, unsigned (the OpenID provider signs them into its own access tokens). */
    claims: claimsOf,
    /** The extra role ids the role sources give a user in an account (machine tokens acting as a user need them). */
    extraRoleIds: async (q: Queryable, a: { userId: string; tenantId: string }): Promise<string[]> => {
      const ids = new Set<string>();
      for (const source of roleSources) for (const id of await source(q, a)) ids.add(id);
      return [...ids];
    },
  });
}
export type TokenIssuer = ReturnType<typeof createTokenIssuer>;
