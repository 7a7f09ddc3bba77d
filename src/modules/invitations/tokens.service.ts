import { decrypt, encrypt, newId, randomSecret, sha256Hex } from '../../lib/crypto.ts';
import { isUuid } from '../../lib/pg-errors.ts';
import { AppError } from '../../http/errors.ts';
import type { Db, Queryable } from '../../storage/db.ts';
import type { EventsService } from '../events/index.ts';
import type { MessagingService } from '../messaging/index.ts';
import type { Grantor, RolesService } from '../roles/index.ts';
import { addMembership, addRoles, findById, isMember, updateUser, type UserRow } from '../users/index.ts';
import { userTablesSql } from '../users/index.ts';
import { accountTablesSql } from '../tenants/index.ts';
import { readFlowSettings } from '../passwordless/index.ts';
import * as invitations from './store.ts';
import * as store from './tokens.store.ts';

export interface InviteTokenDto {
  id: string;
  vendorId: string;
  tenantId: string;
  userId?: string;
  token: string;
  expires: string;
  shouldSendEmail: boolean;
  name: string;
  roleIds: string[];
}

export interface InviteTokensDeps {
  db: Db;
  kek: Buffer;
  roles: RolesService;
  events: EventsService;
  messaging: Pick<MessagingService, 'sendEmail'>;
  /** The environment's id (vendorId of the DTO). */
  vendorId: () => string;
}

export type InviteTokensService = ReturnType<typeof createInviteTokensService>;

const MAX_MINUTES = 525_600; // one year

/**
 * Account invite tokens: a shareable link (256 random bits) that lets whoever signs up, signs in (password or
 * passwordless) with it join the account, with the token's roles (else the account's default roles). It works for
 * any number of people until it expires or is deleted. Looked up by SHA-256; sealed with the KEK so the account's
 * admins can read it again. A member owns at most one per account (`/user` routes); the vendor may create ones
 * without an owner. With `shouldSendEmail` the owner gets a UserUsedInvitation email each time someone joins.
 */
export function createInviteTokensService(deps: InviteTokensDeps) {
  const { db, kek } = deps;

  async function dto(q: Queryable, r: store.InviteTokenRow): Promise<InviteTokenDto> {
    return {
      id: r.id,
      vendorId: deps.vendorId(),
      tenantId: r.tenant_id,
      ...(r.user_id ? { userId: r.user_id } : {}),
      token: decrypt(kek, r.token_enc),
      expires: r.expires_at.toISOString(),
      shouldSendEmail: r.should_send_email,
      name: (await store.accountLive(q, r.tenant_id))?.name ?? '',
      roleIds: r.role_ids,
    };
  }

  function minutes(v: number | undefined, field = 'expiresInMinutes'): number | undefined {
    if (v === undefined) return undefined;
    if (!Number.isInteger(v) || v < 1 || v > MAX_MINUTES)
      throw new AppError('VALIDATION', `${field} must be a whole number of minutes from 1 to ${MAX_MINUTES}`, {
        fields: [field],
      });
    return v;
  }

  async function requireAccount(q: Queryable, tenantId: string) {
    const account = await store.accountLive(q, tenantId);
    if (!account) throw new AppError('ACCOUNT_NOT_FOUND', `No account with id ${tenantId}`);
    return account;
  }

  async function requireMember(q: Queryable, tenantId: string, userId: string): Promise<void> {
    if (!isUuid(userId) || !(await isMember(q, tenantId, userId))) {
      throw new AppError('NOT_A_MEMBER', `User ${userId} is not a member of account ${tenantId}`);
    }
  }

  /** `by`: who creates it (the environment when absent); the roles joiners get must be within theirs. */
  async function create(
    q: Queryable,
    a: {
      tenantId: string;
      userId?: string;
      expiresInMinutes?: number;
      shouldSendEmail?: boolean;
      roleIds?: string[];
      by?: Grantor;
    },
  ): Promise<InviteTokenDto> {
    await requireAccount(q, a.tenantId);
    if (a.userId !== undefined) {
      await requireMember(q, a.tenantId, a.userId);
      // One invite per member and account: a new one replaces the old (the old link stops working).
      await store.removeOfOwner(q, a.tenantId, a.userId);
    }
    const roleIds = a.roleIds ?? [];
    await deps.roles.assertGrantable(q, a.tenantId, a.by ?? { kind: 'vendor' }, roleIds);
    const ttl = minutes(a.expiresInMinutes) ?? (await readFlowSettings(q, 'invitation')).codeExpiration;
    const token = randomSecret(32);
    const row = await store.insert(q, {
      tenant_id: a.tenantId,
      id: newId(),
      user_id: a.userId ?? null,
      token_hash: sha256Hex(token),
      token_enc: encrypt(kek, token),
      role_ids: roleIds,
      should_send_email: a.shouldSendEmail ?? false,
      expires_at: new Date(Date.now() + ttl * 60_000),
    });
    return dto(q, row);
  }

  /** The live token of a link, or the error for it: 400 unknown (or its account removed), 410 expired. */
  async function resolve(q: Queryable, token: string): Promise<store.InviteTokenRow> {
    const row = token && token.length <= 512 ? await store.byHash(q, sha256Hex(token.trim())) : undefined;
    if (!row || !(await store.accountLive(q, row.tenant_id)))
      throw new AppError('CODE_INVALID', 'The invitation token is invalid');
    if (row.expires_at <= new Date())
      throw new AppError('CODE_EXPIRED', 'The invitation token has expired; ask the account for a new one');
    return row;
  }

  return {
    create: (a: Parameters<typeof create>[1]) => db.transaction((tx) => create(tx, a)),

    async ofOwner(tenantId: string, userId: string): Promise<InviteTokenDto> {
      const row = isUuid(userId) ? await store.ofOwner(db, tenantId, userId) : undefined;
      if (!row)
        throw new AppError('INVITE_TOKEN_NOT_FOUND', `User ${userId} has no invite token for account ${tenantId}`);
      return dto(db, row);
    },

    async updateOwner(
      tenantId: string,
      userId: string,
      b: { expiresInMinutes?: number; shouldSendEmail?: boolean },
    ): Promise<InviteTokenDto> {
      const ttl = minutes(b.expiresInMinutes);
      return db.transaction(async (tx) => {
        const row = isUuid(userId) ? await store.ofOwner(tx, tenantId, userId, true) : undefined;
        if (!row)
          throw new AppError('INVITE_TOKEN_NOT_FOUND', `User ${userId} has no invite token for account ${tenantId}`);
        const next = await store.update(tx, tenantId, row.id, {
          expires_at: ttl ? new Date(Date.now() + ttl * 60_000) : undefined,
          should_send_email: b.shouldSendEmail,
        });
        return dto(tx, next);
      });
    },

    async deleteOwner(tenantId: string, userId: string): Promise<void> {
      if (!isUuid(userId) || !(await store.removeOfOwner(db, tenantId, userId)))
        throw new AppError('INVITE_TOKEN_NOT_FOUND', `User ${userId} has no invite token for account ${tenantId}`);
    },

    async all(tenantId?: string): Promise<InviteTokenDto[]> {
      const rows = await store.all(db, tenantId);
      return Promise.all(rows.map((r) => dto(db, r)));
    },

    async remove(id: string, tenantId?: string): Promise<void> {
      if (!isUuid(id) || !(await store.remove(db, tenantId, id)))
        throw new AppError('INVITE_TOKEN_NOT_FOUND', `No invite token with id ${id}`);
    },

    /** For sign-up and login pages: what the link invites to (400 unknown, 410 expired). */
    async verify(token: string): Promise<InviteTokenDto> {
      return dto(db, await resolve(db, token));
    },

    /** Checks a link before anything is written (sign-up); throws 400/410. Answers the account it joins. */
    async check(q: Queryable, token: string): Promise<string> {
      return (await resolve(q, token)).tenant_id;
    },

    /**
     * The user (identified by the calling flow) joins the token's account in the caller's transaction: a new
     * membership gets the token's roles that still exist (else the account's default roles, or firstUserRole in an
     * empty account); a pending invitation of the user to that account counts as accepted. The account becomes the
     * user's active one, so the sign-in (and one finished after MFA) lands there. Answers the account id.
     */
    async join(q: Queryable, user: UserRow, token: string): Promise<string> {
      const row = await resolve(q, token);
      const tenantId = row.tenant_id;
      const { rows } = await q.query<{ sub_account_access_type: string; empty: boolean }>(
        `SELECT sub_account_access_type,
                NOT EXISTS (SELECT 1 FROM (${userTablesSql.memberships}) m WHERE m.tenant_id = $1) AS empty
           FROM (${accountTablesSql.accounts}) t WHERE tenant_id = $1`,
        [tenantId],
      );
      const added = await addMembership(q, tenantId, user.id, {
        subAccess: rows[0].sub_account_access_type !== 'defaultOff',
        expiresAt: null,
      });
      if (added) {
        let roleIds = await deps.roles.idsInScope(q, tenantId, row.role_ids);
        if (!roleIds.length)
          roleIds = rows[0].empty
            ? await deps.roles.firstUserRoleIds(q, tenantId)
            : await deps.roles.defaultRoleIds(q, tenantId);
        await addRoles(q, tenantId, user.id, roleIds);
        await deps.events.emit(q, {
          eventKey: 'user.invited',
          tenantId,
          entity: { type: 'user', id: user.id },
          data: {
            userId: user.id,
            email: user.email,
            tenantId,
            invitedBy: row.user_id ?? 'vendor',
            via: 'invite-token',
            inviteTokenId: row.id,
            emailSent: false,
          },
        });
        const owner = row.should_send_email && row.user_id ? await findById(q, row.user_id) : undefined;
        if (owner?.email) {
          await deps.messaging.sendEmail(q, {
            type: 'UserUsedInvitation',
            to: owner.email,
            tenantId,
            vars: {
              name: owner.name,
              inviteeEmail: user.email ?? user.username ?? '',
              tenantName: (await store.accountLive(q, tenantId))?.name ?? '',
            },
          });
        }
      } else {
        await invitations.markAccepted(q, tenantId, user.id);
      }
      await updateUser(q, user.id, { active_tenant_id: tenantId });
      return tenantId;
    },

    /** Account removal hook: its invite tokens go (a reactivated account id must not revive them). */
    forgetAccount: (q: Queryable, tenantId: string) => store.removeOfAccount(q, tenantId),
  };
}
