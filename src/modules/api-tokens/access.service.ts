import { AppError } from '../../http/errors.ts';
import type { UserAuth } from '../../http/auth.ts';
import { newId } from '../../lib/crypto.ts';
import { isUuid } from '../../lib/pg-errors.ts';
import { iso } from '../../lib/time.ts';
import type { Queryable } from '../../storage/db.ts';
import {
  assertUsable,
  checkPermissionIds,
  effectiveClaims,
  settingsOf,
  userPermissions,
  type Caller,
} from './claims.ts';
import type { CreateTenantAccessToken, CreateUserAccessToken } from './schema.ts';
import { expiryOf, type MachineDeps } from './service.ts';
import * as store from './store.ts';

/** An access token without an end still gets an `exp`: ten years (verifiers reject JWTs without one). */
const NO_EXPIRY_SECONDS = 10 * 365 * 86400;

const tenantView = (r: store.TokenRow, secret?: string) => ({
  id: r.id,
  description: r.description,
  createdAt: iso(r.created_at)!,
  ...(secret ? { secret } : {}),
  expires: iso(r.expires_at),
  roleIds: r.role_ids,
  createdByUserId: r.created_by_user_id ?? '',
});
const userView = (r: store.TokenRow, secret?: string) => ({
  id: r.id,
  description: r.description,
  createdAt: iso(r.created_at)!,
  ...(secret ? { secret } : {}),
  expires: iso(r.expires_at),
  permissionIds: r.permission_ids,
});

export type AccessTokensService = ReturnType<typeof createAccessTokensService>;

/**
 * Long-lived access tokens (`tenantAccessToken`, `userAccessToken`): the secret is a signed JWT naming the token id,
 * shown once; its roles and permissions are looked up when it is used (here by the guard, elsewhere by verifiers
 * through the vendor-only routes), so deleting the token or changing the roles takes effect at once.
 */
export function createAccessTokensService(deps: MachineDeps) {
  const { db } = deps;

  async function sign(row: store.TokenRow): Promise<string> {
    const ttl = row.expires_at
      ? Math.max(1, Math.floor((row.expires_at.getTime() - Date.now()) / 1000))
      : NO_EXPIRY_SECONDS;
    const claims: Record<string, unknown> = {
      type: row.user_id ? 'userAccessToken' : 'tenantAccessToken',
      sub: row.id,
      tenantId: row.tenant_id,
      createdByUserId: row.created_by_user_id ?? '',
      aud: deps.environment.id,
    };
    if (row.user_id) claims.userId = row.user_id;
    return deps.keys.sign(claims, ttl);
  }

  /** A live access token of the account with its claims; 404 when unknown, of another kind, expired or its user gone. */
  async function active(q: Queryable, tenantId: string, id: string, forUser: boolean) {
    const row = isUuid(id) ? await store.liveToken(q, id, 'access') : undefined;
    if (!row || row.tenant_id !== tenantId || Boolean(row.user_id) !== forUser)
      throw new AppError('ACCESS_TOKEN_NOT_FOUND', `No active access token ${id} in account ${tenantId}`);
    try {
      assertUsable(row, settingsOf(row));
    } catch (err) {
      if (err instanceof AppError && err.code === 'API_TOKENS_DISABLED') throw err;
      throw new AppError(
        'ACCESS_TOKEN_NOT_FOUND',
        `Access token ${id} is no longer active (${(err as Error).message})`,
      );
    }
    return { row, ...(await effectiveClaims(q, row, deps.issue)) };
  }

  async function requireEnabled(): Promise<void> {
    if (!(await deps.environment.settings()).apiTokensEnabled) throw new AppError('API_TOKENS_DISABLED');
  }

  return {
    async createTenantToken(tenantId: string, caller: Caller, body: CreateTenantAccessToken) {
      await requireEnabled();
      const row = await db.transaction(async (tx) => {
        await deps.tenants.requireLive(tx, tenantId, 'gatehouse-tenant-id');
        await deps.roles.assertGrantable(tx, tenantId, caller, body.roleIds ?? []);
        return store.insertToken(tx, {
          tenant_id: tenantId,
          id: newId(),
          kind: 'access',
          user_id: null,
          secret_hash: null,
          description: body.description ?? '',
          metadata: {},
          role_ids: body.roleIds ?? [],
          permission_ids: [],
          created_by_user_id: caller.kind === 'user' ? caller.userId : null,
          expires_at: expiryOf(body.expiresInMinutes),
        });
      });
      return tenantView(row, await sign(row));
    },

    listTenantTokens: async (tenantId: string) => ({
      accessTokens: (await store.listTokens(db, tenantId, null, 'access')).map((r) => tenantView(r)),
    }),

    async deleteTenantToken(tenantId: string, id: string): Promise<void> {
      if (!isUuid(id) || !(await store.deleteToken(db, tenantId, id, null, 'access')))
        throw new AppError('ACCESS_TOKEN_NOT_FOUND', `No access token with id ${id} in account ${tenantId}`);
    },

    async createUserToken(tenantId: string, userId: string, body: CreateUserAccessToken) {
      await requireEnabled();
      const row = await db.transaction(async (tx) => {
        await deps.users.requireMembership(tx, tenantId, userId);
        if (body.permissionIds?.length)
          await checkPermissionIds(tx, body.permissionIds, await userPermissions(tx, tenantId, userId, deps.issue));
        return store.insertToken(tx, {
          tenant_id: tenantId,
          id: newId(),
          kind: 'access',
          user_id: userId,
          secret_hash: null,
          description: body.description ?? '',
          metadata: {},
          role_ids: [],
          permission_ids: body.permissionIds ?? [],
          created_by_user_id: userId,
          expires_at: expiryOf(body.expiresInMinutes),
        });
      });
      return userView(row, await sign(row));
    },

    listUserTokens: async (tenantId: string, userId: string) => ({
      accessTokens: (await store.listTokens(db, tenantId, userId, 'access')).map((r) => userView(r)),
    }),

    async deleteUserToken(tenantId: string, userId: string, id: string): Promise<void> {
      if (!isUuid(id) || !(await store.deleteToken(db, tenantId, id, userId, 'access')))
        throw new AppError(
          'ACCESS_TOKEN_NOT_FOUND',
          `No access token with id ${id} of this user in account ${tenantId}`,
        );
    },

    // -- vendor-only lookups for verifiers --

    activeIds: (tenantId: string) => store.activeAccessTokenIds(db, tenantId),

    async userTokenData(tenantId: string, id: string) {
      const { row, roles, permissions } = await active(db, tenantId, id, true);
      return {
        userId: row.user_id!,
        id: row.id,
        tenantId: row.tenant_id,
        permissions,
        roles,
        expires: iso(row.expires_at),
      };
    },

    async tenantTokenData(tenantId: string, id: string) {
      const { row, roles, permissions } = await active(db, tenantId, id, false);
      return { id: row.id, tenantId: row.tenant_id, permissions, roles, expires: iso(row.expires_at) };
    },

    /** The guard's check of an access-token JWT: live now, with its current roles and permissions (one statement). */
    async authContext(claims: Record<string, unknown>): Promise<UserAuth> {
      const id = String(claims.sub ?? '');
      const tenantId = String(claims.tenantId ?? '');
      const row = isUuid(id) ? await store.liveToken(db, id, 'access') : undefined;
      if (!row || row.tenant_id !== tenantId) throw new AppError('MACHINE_TOKEN_REVOKED');
      assertUsable(row, settingsOf(row));
      const { roles, permissions } = await effectiveClaims(db, row, deps.issue);
      return {
        kind: 'user',
        userId: row.user_id ?? row.id,
        tenantId,
        tenantIds: [tenantId],
        roles,
        permissions,
        claims,
        actor: { type: String(claims.type), id },
      };
    },
  };
}
