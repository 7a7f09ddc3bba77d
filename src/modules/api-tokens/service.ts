import { AppError } from '../../http/errors.ts';
import type { UserAuth } from '../../http/auth.ts';
import { newId, randomSecret, safeEqual, sha256Hex } from '../../lib/crypto.ts';
import { isUuid } from '../../lib/pg-errors.ts';
import { iso } from '../../lib/time.ts';
import type { Db, Queryable } from '../../storage/db.ts';
import type { AuditInlineOf, InlineAudit } from '../audit/index.ts';
import type { TokenIssuer } from '../auth/index.ts';
import type { EnvironmentService } from '../environment/index.ts';
import type { KeysService } from '../keys/index.ts';
import type { RolesService } from '../roles/index.ts';
import type { TenantsService } from '../tenants/index.ts';
import type { UsersService } from '../users/index.ts';
import {
  assertUsable,
  checkPermissionIds,
  effectiveClaims,
  secondsUntil,
  settingsOf,
  userPermissions,
  type Caller,
} from './claims.ts';
import type { ApiTokenAuthResponse, CreateTenantApiToken, CreateUserApiToken, UpdateTenantApiToken } from './schema.ts';
import * as store from './store.ts';

export interface MachineDeps {
  db: Db;
  keys: KeysService;
  environment: EnvironmentService;
  roles: RolesService;
  users: UsersService;
  tenants: TenantsService;
  issue: TokenIssuer;
  /**
   * The IP gate's cached check (restrictions' `ip.allows`: this process's changes apply at once, other processes'
   * within IP_GATE_CACHE_MS).
   */
  ipAllowed: (q: Queryable, tenantId: string, ip: string | undefined) => Promise<boolean>;
}

/** Live refresh tokens kept per API token; a new exchange beyond this drops the oldest. */
export const MAX_REFRESH_TOKENS = 100;

const tenantView = (r: store.TokenRow) => ({
  clientId: r.id,
  description: r.description,
  tenantId: r.tenant_id,
  createdByUserId: r.created_by_user_id ?? '',
  metadata: r.metadata,
  createdAt: iso(r.created_at)!,
  permissionIds: r.permission_ids,
  roleIds: r.role_ids,
  expires: iso(r.expires_at),
});
const userView = (r: store.TokenRow) => ({
  clientId: r.id,
  description: r.description,
  metadata: r.metadata,
  createdAt: iso(r.created_at)!,
  expires: iso(r.expires_at),
  permissionIds: r.permission_ids,
});

export const expiryOf = (minutes: number | undefined): Date | null =>
  minutes ? new Date(Date.now() + minutes * 60_000) : null;

export type ApiTokensService = ReturnType<typeof createApiTokensService>;

/** Client-credentials API tokens of accounts and users: management, exchange, refresh, and the guard's check. */
export function createApiTokensService(deps: MachineDeps) {
  const { db } = deps;
  const DECOY_HASH = sha256Hex(randomSecret());

  /**
   * The roles and permissions an account token may get from this caller; 400 unknown ids, 403 beyond the caller's own
   * (roles: the roles module's grant rule, permissions and level).
   */
  async function checkGrants(
    q: Queryable,
    tenantId: string,
    caller: Caller,
    roleIds: string[] | undefined,
    permissionIds: string[] | undefined,
  ): Promise<void> {
    await deps.roles.assertGrantable(q, tenantId, caller, roleIds ?? []);
    const held = caller.kind === 'user' ? [...caller.permissions] : undefined;
    if (permissionIds?.length) await checkPermissionIds(q, permissionIds, held);
  }

  /** The account's IP restrictions apply to client-credentials sign-ins and refreshes as to user sign-ins. */
  async function checkIp(q: Queryable, tenantId: string, ip: string | undefined): Promise<void> {
    if (!(await deps.ipAllowed(q, tenantId, ip)))
      throw new AppError(
        'IP_RESTRICTED',
        `An API token of account ${tenantId} may not sign in from ${ip ?? 'an unknown address'} (the account's IP restrictions)`,
      );
  }

  function requireEnabledNow(settings: { apiTokensEnabled: boolean }) {
    if (!settings.apiTokensEnabled) throw new AppError('API_TOKENS_DISABLED');
  }

  /**
   * Signs the access token and stores a new refresh token (at most MAX_REFRESH_TOKENS per API token); `audit`, when
   * given, is the request's success entry, stored by the same statement.
   */
  /** The access token of an API token: its claims (roles and permissions now) signed, and the lifetime. */
  async function accessTokenOf(q: Queryable, row: store.LiveTokenRow) {
    const settings = settingsOf(row);
    const { roles, permissions } = await effectiveClaims(q, row, deps.issue);
    const ttl = secondsUntil(row.expires_at, settings.defaultTokenExpiration);
    const claims: Record<string, unknown> = {
      type: row.user_id ? 'userApiToken' : 'tenantApiToken',
      sub: row.id,
      tenantId: row.tenant_id,
      tenantIds: [row.tenant_id],
      roles,
      permissions,
      metadata: row.metadata,
      createdByUserId: row.created_by_user_id ?? '',
      aud: deps.environment.id,
    };
    if (row.user_id) claims.userId = row.user_id;
    return { claims, ttl, settings };
  }

  async function grant(q: Queryable, row: store.LiveTokenRow, audit?: InlineAudit): Promise<ApiTokenAuthResponse> {
    const { claims, ttl, settings } = await accessTokenOf(q, row);
    const refreshToken = randomSecret(32);
    const refreshExpires = new Date(
      Math.min(Date.now() + settings.defaultRefreshTokenExpiration * 1000, row.expires_at?.getTime() ?? Infinity),
    );
    const add = () =>
      store.addRefreshToken(
        q,
        { tenantId: row.tenant_id, apiTokenId: row.id, tokenHash: sha256Hex(refreshToken), expiresAt: refreshExpires },
        MAX_REFRESH_TOKENS,
        audit,
      );
    let accessToken: string;
    if (audit) {
      // The statement stores the success entry: sign first, so a signing failure cannot leave a success entry behind
      // an error answer (outside a transaction the statement commits on its own).
      accessToken = await deps.keys.sign(claims, ttl);
      await add();
    } else {
      // Signing (CPU) and the insert (database) do not depend on each other.
      [accessToken] = await Promise.all([deps.keys.sign(claims, ttl), add()]);
    }
    return {
      access_token: accessToken,
      refresh_token: refreshToken,
      expires_in: ttl,
      expires: new Date(Date.now() + ttl * 1000).toISOString(),
    };
  }

  return {
    // -- account tokens --

    async createTenantToken(tenantId: string, caller: Caller, body: CreateTenantApiToken) {
      requireEnabledNow(await deps.environment.settings());
      return db.transaction(async (tx) => {
        await deps.tenants.requireLive(tx, tenantId, 'gatehouse-tenant-id');
        await checkGrants(tx, tenantId, caller, body.roleIds, body.permissionIds);
        const secret = randomSecret(32);
        const row = await store.insertToken(tx, {
          tenant_id: tenantId,
          id: newId(),
          kind: 'client',
          user_id: null,
          secret_hash: sha256Hex(secret),
          description: body.description ?? '',
          metadata: body.metadata ?? {},
          role_ids: body.roleIds ?? [],
          permission_ids: body.permissionIds ?? [],
          created_by_user_id: caller.kind === 'user' ? caller.userId : null,
          expires_at: expiryOf(body.expiresInMinutes),
        });
        return { ...tenantView(row), secret };
      });
    },

    async listTenantTokens(tenantId: string) {
      return (await store.listTokens(db, tenantId, null, 'client')).map(tenantView);
    },

    async updateTenantToken(tenantId: string, id: string, caller: Caller, body: UpdateTenantApiToken) {
      return db.transaction(async (tx) => {
        const row = isUuid(id) ? await store.findToken(tx, tenantId, id, true) : undefined;
        if (!row || row.kind !== 'client' || row.user_id)
          throw new AppError('API_TOKEN_NOT_FOUND', `No API token with id ${id} in account ${tenantId}`);
        await checkGrants(tx, tenantId, caller, body.roleIds, body.permissionIds);
        return tenantView(
          await store.updateToken(tx, tenantId, id, {
            description: body.description,
            metadata: body.metadata,
            role_ids: body.roleIds,
            permission_ids: body.permissionIds,
          }),
        );
      });
    },

    async deleteTenantToken(tenantId: string, id: string): Promise<void> {
      if (!isUuid(id) || !(await store.deleteToken(db, tenantId, id, null, 'client')))
        throw new AppError('API_TOKEN_NOT_FOUND', `No API token with id ${id} in account ${tenantId}`);
    },

    // -- personal (user) tokens --

    async createUserToken(tenantId: string, userId: string, body: CreateUserApiToken) {
      requireEnabledNow(await deps.environment.settings());
      return db.transaction(async (tx) => {
        await deps.users.requireMembership(tx, tenantId, userId);
        if (body.permissionIds?.length)
          await checkPermissionIds(tx, body.permissionIds, await userPermissions(tx, tenantId, userId, deps.issue));
        const secret = randomSecret(32);
        const row = await store.insertToken(tx, {
          tenant_id: tenantId,
          id: newId(),
          kind: 'client',
          user_id: userId,
          secret_hash: sha256Hex(secret),
          description: body.description ?? '',
          metadata: body.metadata ?? {},
          role_ids: [],
          permission_ids: body.permissionIds ?? [],
          created_by_user_id: userId,
          expires_at: expiryOf(body.expiresInMinutes),
        });
        return { ...userView(row), secret };
      });
    },

    async listUserTokens(tenantId: string, userId: string) {
      return (await store.listTokens(db, tenantId, userId, 'client')).map(userView);
    },

    async deleteUserToken(tenantId: string, userId: string, id: string): Promise<void> {
      if (!isUuid(id) || !(await store.deleteToken(db, tenantId, id, userId, 'client')))
        throw new AppError('API_TOKEN_NOT_FOUND', `No API token with id ${id} of this user in account ${tenantId}`);
    },

    // -- exchange and refresh --

    /**
     * Client credentials → access and refresh token. One indexed lookup reads the token, its claims and the
     * settings; the secret is compared as SHA-256 in constant time (an unknown id is compared against a decoy).
     */
    async exchange(
      clientId: string,
      secret: string,
      client: { ip?: string } = {},
      audit?: AuditInlineOf,
    ): Promise<ApiTokenAuthResponse> {
      const row = isUuid(clientId) ? await store.liveToken(db, clientId, 'client') : undefined;
      const matches = safeEqual(sha256Hex(secret), row?.secret_hash ?? DECOY_HASH);
      if (!row || !matches) throw new AppError('BAD_CREDENTIALS', 'Invalid clientId or secret');
      assertUsable(row, settingsOf(row));
      await checkIp(db, row.tenant_id, client.ip);
      // The success entry of the audit log rides in the refresh token's statement (one statement, so committed with it).
      const entry = audit?.(200, {});
      const answer = await grant(db, row, entry);
      entry?.stored();
      return answer;
    },

    /**
     * The OAuth client-credentials grant (`/oauth/token`): an access token and no refresh token (RFC 6749 4.4.3), so
     * nothing is written per exchange but the audit entry, which the audit hook stages before the answer is sent.
     */
    async clientCredentials(
      clientId: string,
      secret: string,
      client: { ip?: string } = {},
    ): Promise<{ access_token: string; expires_in: number }> {
      const row = isUuid(clientId) ? await store.liveToken(db, clientId, 'client') : undefined;
      const matches = safeEqual(sha256Hex(secret), row?.secret_hash ?? DECOY_HASH);
      if (!row || !matches) throw new AppError('BAD_CREDENTIALS', 'Invalid clientId or secret');
      assertUsable(row, settingsOf(row));
      await checkIp(db, row.tenant_id, client.ip);
      const { claims, ttl } = await accessTokenOf(db, row);
      return { access_token: await deps.keys.sign(claims, ttl), expires_in: ttl };
    },

    /** Rotation: the refresh token is consumed and a new pair issued; a used, unknown or expired one is a 401. */
    async refresh(
      refreshToken: string,
      client: { ip?: string } = {},
      audit?: AuditInlineOf,
    ): Promise<ApiTokenAuthResponse> {
      let entry: InlineAudit | undefined;
      const answer = await db.transaction(async (tx) => {
        const taken = await store.takeRefreshToken(tx, sha256Hex(refreshToken));
        if (!taken || taken.expires_at.getTime() <= Date.now()) throw new AppError('INVALID_API_TOKEN_REFRESH');
        const row = await store.liveToken(tx, taken.api_token_id, 'client');
        if (!row) throw new AppError('INVALID_API_TOKEN_REFRESH');
        assertUsable(row, settingsOf(row));
        await checkIp(tx, row.tenant_id, client.ip);
        entry = audit?.(200, {});
        return grant(tx, row, entry);
      });
      // Committed: the entry staged in the transaction stands (a rolled-back one is recorded by the hook instead).
      entry?.stored();
      return answer;
    },

    /**
     * The guard's check of a `tenantApiToken` / `userApiToken` JWT: the token must still exist in the claimed account
     * (deleted tokens, removed users and removed accounts are refused at once, one indexed read per request), not be
     * expired, and API tokens must be enabled. Roles and permissions come from the JWT (fixed at exchange).
     */
    async authContext(claims: Record<string, unknown>): Promise<UserAuth> {
      const id = String(claims.sub ?? '');
      const tenantId = String(claims.tenantId ?? '');
      const row = isUuid(id) ? await store.tokenState(db, id, 'client') : undefined;
      if (!row || row.tenant_id !== tenantId) throw new AppError('MACHINE_TOKEN_REVOKED');
      assertUsable(row, settingsOf(row));
      const strings = (v: unknown) => (Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : []);
      return {
        kind: 'user',
        userId: row.user_id ?? row.id,
        tenantId,
        tenantIds: [tenantId],
        roles: strings(claims.roles),
        permissions: strings(claims.permissions),
        claims,
        actor: { type: String(claims.type), id },
      };
    },

    /** account.removed: the account's tokens and their refresh tokens go in the removal's transaction. */
    forgetAccount: (q: Queryable, tenantId: string) => store.deleteAccountTokens(q, tenantId),
    countRefreshTokens: (tenantId: string, id: string) => store.countRefreshTokens(db, tenantId, id),
  };
}
