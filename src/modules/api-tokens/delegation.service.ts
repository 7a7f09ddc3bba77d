import type { Logger } from 'pino';
import { AppError } from '../../http/errors.ts';
import type { AuthContext, UserAuth } from '../../http/auth.ts';
import { newId } from '../../lib/crypto.ts';
import { holdsPermission } from '../../lib/permissions.ts';
import { iso } from '../../lib/time.ts';
import type { Queryable } from '../../storage/db.ts';
import type { EventsService } from '../events/index.ts';
import { findById, type UserRow } from '../users/index.ts';
import { userPermissions } from './claims.ts';
import type { ImpersonateBody } from './schema.ts';
import type { MachineDeps } from './service.ts';
import * as store from './store.ts';

export const IMPERSONATION_PERMISSION = 'fe.secure.impersonate.users';
export const IMPERSONATION_AMR = 'impersonation';

const actView = (r: store.ActRow) => ({
  id: r.id,
  kind: r.kind,
  tenantId: r.tenant_id,
  userId: r.user_id,
  actor: { type: r.actor_type, id: r.actor_id },
  reason: r.reason,
  createdAt: iso(r.created_at)!,
  expiresAt: iso(r.expires_at)!,
});

export type DelegationService = ReturnType<typeof createDelegationService>;

/**
 * Acting for someone else. Delegation: an account API token obtains a user token for a user of its account, with
 * `act: {sub: <token id>, type: 'tenantApiToken'}` and only the permissions both hold (environment switch
 * `delegationEnabled`). Impersonation: a vendor, or a user holding `fe.secure.impersonate.users`, obtains the user's
 * own token with `act: {sub: <impersonator>}` and `amr: ['impersonation']`. Both are recorded in `token_acts`;
 * impersonation also emits `user.impersonated` and is logged.
 */
export function createDelegationService(deps: MachineDeps & { events: EventsService; log: Logger }) {
  const { db } = deps;

  async function requireUser(q: Queryable, userId: string): Promise<UserRow> {
    const user = await findById(q, userId);
    if (!user) throw new AppError('USER_NOT_FOUND', `No user with id ${userId}`);
    return user;
  }

  async function membershipIn(q: Queryable, user: UserRow, tenantId: string) {
    const view = await deps.users.accessView(q, user.id);
    const membership = await view.accessTo(tenantId);
    if (!membership) throw new AppError('NOT_A_MEMBER', `User ${user.id} has no access to account ${tenantId}`);
    return { membership, tenantIds: view.tenantIds };
  }

  return {
    async config() {
      return { enabled: (await deps.environment.settings()).delegationEnabled };
    },

    async setConfig(enabled: boolean | undefined) {
      if (enabled !== undefined) await deps.environment.updateSettings({ delegationEnabled: enabled });
      return this.config();
    },

    /** An account API token acts on behalf of a user of its account (RFC 8693 `act`). */
    async delegate(caller: UserAuth, userId: string) {
      const settings = await deps.environment.settings();
      if (!settings.delegationEnabled)
        throw new AppError(
          'DELEGATION_DISABLED',
          'Delegation is disabled in this environment (POST /identity/resources/configurations/v1/delegation)',
        );
      const actor = caller.actor;
      if (actor?.type !== 'tenantApiToken')
        throw new AppError(
          'WRONG_TOKEN_KIND',
          'Only an account API token (client credentials) may act on behalf of a user',
        );
      const tenantId = caller.tenantId;
      return db.transaction(async (tx) => {
        const user = await requireUser(tx, userId);
        await membershipIn(tx, user, tenantId);
        const own = await userPermissions(tx, tenantId, userId, deps.issue);
        const permissions = own.filter((k) => holdsPermission(caller.permissions, k));
        const ttl = settings.defaultTokenExpiration;
        const act = await store.insertAct(tx, {
          tenant_id: tenantId,
          id: newId(),
          kind: 'delegation',
          user_id: userId,
          actor_type: 'tenantApiToken',
          actor_id: actor.id,
          reason: '',
          expires_at: new Date(Date.now() + ttl * 1000),
        });
        const token = await deps.keys.sign(
          {
            type: 'userToken',
            sub: userId,
            email: user.email,
            name: user.name,
            tenantId,
            tenantIds: [tenantId],
            roles: [],
            permissions,
            metadata: user.metadata ?? {},
            sid: act.id,
            amr: ['delegation'],
            act: { sub: actor.id, type: 'tenantApiToken' },
            aud: deps.environment.id,
          },
          ttl,
        );
        return {
          access_token: token,
          token_type: 'Bearer' as const,
          issued_token_type: 'urn:ietf:params:oauth:token-type:access_token',
          expires_in: ttl,
          expires: act.expires_at.toISOString(),
        };
      });
    },

    /** A vendor or a permitted admin of the same account signs in as a user; no session or refresh token is made. */
    async impersonate(
      caller: AuthContext,
      body: ImpersonateBody,
      headerTenant: string | undefined,
      client: { ip?: string },
    ) {
      if (caller.kind === 'user' && caller.actor)
        throw new AppError('MACHINE_TOKEN_NOT_ALLOWED', 'A machine token cannot impersonate users');
      if (caller.kind === 'user' && caller.claims.act)
        throw new AppError('IMPERSONATION_NOT_ALLOWED', 'An impersonation or delegated token cannot impersonate again');
      if (caller.kind === 'user' && caller.userId === body.userId)
        throw new AppError('IMPERSONATION_NOT_ALLOWED', 'You cannot impersonate yourself');
      if (caller.kind === 'user' && body.tenantId && body.tenantId !== caller.tenantId)
        throw new AppError('IMPERSONATION_NOT_ALLOWED', 'An admin may impersonate users of their own account only');
      const settings = await deps.environment.settings();
      return db.transaction(async (tx) => {
        const user = await requireUser(tx, body.userId);
        let tenantId = caller.kind === 'user' ? caller.tenantId : (body.tenantId ?? headerTenant);
        if (!tenantId) {
          const view = await deps.users.accessView(tx, user.id);
          tenantId =
            user.active_tenant_id && (await view.accessTo(user.active_tenant_id))
              ? user.active_tenant_id
              : view.tenantIds[0];
          if (!tenantId) throw new AppError('NOT_A_MEMBER', `User ${user.id} has no account to act in`);
        }
        const { membership } = await membershipIn(tx, user, tenantId);
        if (caller.kind === 'user') {
          const beyond = (await userPermissions(tx, tenantId, user.id, deps.issue)).filter(
            (k) => !holdsPermission(caller.permissions, k),
          );
          if (beyond.length)
            throw new AppError(
              'IMPERSONATION_NOT_ALLOWED',
              `The user holds permissions you do not: ${beyond.join(', ')}`,
              { permissions: beyond },
            );
        }
        const actor =
          caller.kind === 'vendor' ? { type: 'vendor', id: caller.clientId } : { type: 'user', id: caller.userId };
        const ttl = settings.defaultTokenExpiration;
        const act = await store.insertAct(tx, {
          tenant_id: tenantId,
          id: newId(),
          kind: 'impersonation',
          user_id: user.id,
          actor_type: actor.type,
          actor_id: actor.id,
          reason: body.reason ?? '',
          expires_at: new Date(Date.now() + ttl * 1000),
        });
        const { accessToken, expiresIn } = await deps.issue(
          tx,
          // Only the impersonated account: the token cannot be used to reach the user's other accounts.
          {
            user,
            tenantId,
            membership,
            tenantIds: [tenantId],
            sessionId: act.id,
            amr: [IMPERSONATION_AMR],
            authTime: new Date(),
          },
          { settings },
        );
        await deps.events.emit(tx, {
          eventKey: 'user.impersonated',
          tenantId,
          entity: { type: 'user', id: user.id },
          data: {
            impersonationId: act.id,
            userId: user.id,
            tenantId,
            actor,
            reason: act.reason,
            ip: client.ip ?? null,
          },
        });
        deps.log.info({ impersonationId: act.id, tenantId, userId: user.id, actor }, 'user impersonated');
        return {
          accessToken,
          expiresIn,
          expires: new Date(Date.now() + expiresIn * 1000).toISOString(),
          userId: user.id,
          tenantId,
          impersonationId: act.id,
        };
      });
    },

    async listActs(tenantId: string | undefined, limit = 100) {
      return (await store.listActs(db, tenantId, limit)).map(actView);
    },
  };
}
