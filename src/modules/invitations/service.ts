import { isUuid } from '../../lib/pg-errors.ts';
import { AppError } from '../../http/errors.ts';
import type { Db, Queryable } from '../../storage/db.ts';
import type { LoginService } from '../auth/index.ts';
import type { PasswordService } from '../credentials/index.ts';
import type { EventsService } from '../events/index.ts';
import type { Grantor, RolesService } from '../roles/index.ts';
import { parseMetadata, type TenantsService } from '../tenants/index.ts';
import {
  acceptMembership,
  addMembership,
  addRoles,
  createUserCreation,
  findByEmail,
  findById,
  hasMembers,
  isMember,
  proveMailbox,
  removeMembership,
  updateUser,
  type UserRow,
  type UsersService,
} from '../users/index.ts';
import {
  checkError,
  countFailure,
  limitRequests,
  readFlowSettings,
  writeFlowSettings,
  type Client,
  type CodeBook,
  type CodeLimits,
  type Delivery,
  type StrategySettings,
} from '../passwordless/index.ts';
import { assertEmailDomainAllowed } from '../restrictions/index.ts';
import { awaitsActivation } from '../signup/index.ts';
import type { InviteBody } from './schema.ts';
import * as store from './store.ts';

export interface InvitationsDeps {
  db: Db;
  tenants: TenantsService;
  roles: RolesService;
  users: UsersService;
  passwords: PasswordService;
  login: LoginService;
  events: EventsService;
  codes: CodeBook;
  delivery: Delivery;
  limits: CodeLimits;
  /** Ends the user's sessions in the caller's transaction (acceptance dropped a temporary password). */
  endSessions?: (q: Queryable, userId: string) => Promise<unknown>;
}

/** Who invites: an environment token, or an account admin (their user id, and what their token holds). */
export type Inviter = Grantor;

export type InvitationsService = ReturnType<typeof createInvitationsService>;

/**
 * Invitations of users to accounts. Inviting creates the user when the email is new (no password, not verified) and
 * the membership with its roles at once; the emailed link or code (per the invitation strategy, expiring) accepts it:
 * the invitation is marked accepted, the email verified, and the user is signed in to that account. An account
 * administrator's invitation of a user who already exists makes a pending membership, which gives no access until the
 * user accepts (the emailed link or code, or the signed-in acceptance `acceptMine`): joining needs the person's consent.
 */
export function createInvitationsService(deps: InvitationsDeps) {
  const { db, codes } = deps;
  const creation = createUserCreation(deps);

  async function send(q: Queryable, user: UserRow, tenantId: string, inviter?: string) {
    const s = await readFlowSettings(q, 'invitation');
    const issued = await codes.issue(q, {
      purpose: 'invitation',
      userId: user.id,
      tenantId,
      ttlSeconds: s.codeExpiration * 60,
      link: true,
      code: s.strategy === 'code',
    });
    await deps.delivery.sendEmail(q, {
      type: 'InviteToTenant',
      to: user.email,
      tenantId,
      vars: {
        name: user.name,
        email: user.email ?? '',
        tenantName: await store.accountName(q, tenantId),
        expiresInMinutes: String(s.codeExpiration),
        ...(inviter ? { inviterName: inviter } : {}),
        ...(issued.code ? { code: issued.code } : {}),
      },
      linkParams: { userId: user.id, token: issued.token! },
    });
  }

  async function inviterName(q: Queryable, by: Inviter): Promise<string | undefined> {
    if (by.kind !== 'user' || !isUuid(by.userId)) return undefined;
    const u = await findById(q, by.userId);
    return u ? u.name || u.email || u.username || undefined : undefined;
  }

  return {
    /** Invites a user (new or existing) to an account and emails the invitation unless skipInviteEmail. */
    async invite(tenantId: string, body: InviteBody, by: Inviter) {
      const email = body.email.trim().toLowerCase();
      const metadata = body.metadata !== undefined ? parseMetadata(body.metadata, 'metadata') : {};
      // A password is checked (the account's policy) and hashed before the transaction, as user creation does.
      if (body.password !== undefined) await deps.passwords.validate(db, body.password, { tenantId, email });
      const passwordHash = body.password !== undefined ? await deps.passwords.hash(body.password) : null;
      return db.transaction(async (tx) => {
        const account = await deps.tenants.requireLive(tx, tenantId, 'tenantId', 'FOR SHARE');
        let user = await findByEmail(tx, email);
        const isNew = !user;
        if (user && passwordHash) {
          throw new AppError(
            'CONFLICT',
            `body.password: ${email} already has an account in the environment and keeps its password; invite without a password`,
          );
        }
        const roleIds = body.roleIds?.length ? body.roleIds : undefined;
        if (roleIds) await deps.roles.assertGrantable(tx, tenantId, by, roleIds);
        // An existing user joins an administrator's account only with their consent; the environment owns every account.
        const pending = !isNew && by.kind === 'user';
        if (!user) {
          user = await creation.create(tx, {
            source: 'invitation',
            tenantId,
            email,
            username: body.username ?? null,
            name: body.name?.trim() ?? '',
            profilePictureUrl: body.profilePictureUrl ?? null,
            phoneNumber: body.phoneNumber,
            verified: false,
            provider: body.provider ?? 'local',
            metadata,
            passwordHash,
            roleIds,
            defaults: 'firstMember',
            // An account administrator's password for someone else is temporary (dropped on proof of the mailbox).
            passwordTemporary: passwordHash !== null && by.kind === 'user',
          });
        } else {
          const firstMember = !(await hasMembers(tx, tenantId));
          const subAccess = account.sub_account_access_type !== 'defaultOff';
          if (!(await addMembership(tx, tenantId, user.id, { subAccess, expiresAt: null, pending }))) {
            const open = await store.findInvitation(tx, tenantId, user.id);
            const again = 'send the invitation again with POST /identity/resources/users/v1/invitation/reset';
            throw new AppError(
              'ALREADY_MEMBER',
              open && !open.accepted_at
                ? `${email} is already invited to account ${tenantId}; ${again}`
                : `${email} is already a member of account ${tenantId}`,
            );
          }
          const first = firstMember ? await deps.roles.firstUserRoleIds(tx, tenantId) : undefined;
          await addRoles(tx, tenantId, user.id, roleIds ?? first ?? (await deps.roles.defaultRoleIds(tx, tenantId)));
        }
        // A new user of the account: the environment's and the account's email-domain restrictions (403 rolls back).
        await assertEmailDomainAllowed(tx, tenantId, email);
        await store.insertInvitation(tx, tenantId, user.id, by.kind === 'user' ? by.userId : null);
        if (!body.skipInviteEmail) await send(tx, user, tenantId, await inviterName(tx, by));
        await deps.events.emit(tx, {
          eventKey: 'user.invited',
          tenantId,
          entity: { type: 'user', id: user.id },
          data: {
            userId: user.id,
            email,
            tenantId,
            invitedBy: by.kind === 'user' ? by.userId : 'vendor',
            emailSent: !body.skipInviteEmail,
            pending,
          },
        });
        return deps.users.record(tx, user, tenantId);
      });
    },

    /** Sends a pending invitation again with a fresh link/code (earlier ones stop working). */
    async resend(tenantId: string, email: string, client: Client): Promise<void> {
      const e = email.trim().toLowerCase();
      limitRequests(deps.limits, client.ip, e);
      await db.transaction(async (tx) => {
        const user = await findByEmail(tx, e);
        const inv = user ? await store.findInvitation(tx, tenantId, user.id) : undefined;
        if (!user || !inv || inv.accepted_at)
          throw new AppError('INVITATION_NOT_FOUND', `No pending invitation of ${e} to account ${tenantId}`);
        await send(tx, user, tenantId);
      });
    },

    /**
     * "Reset all invitation tokens": sends every pending invitation of the email again with a fresh link/code (earlier
     * ones stop working). An environment token reaches every account, a user token its own account. Answers the count.
     */
    async resendAll(tenantId: string | undefined, email: string, client: Client): Promise<number> {
      const e = email.trim().toLowerCase();
      limitRequests(deps.limits, client.ip, e);
      return db.transaction(async (tx) => {
        const user = await findByEmail(tx, e);
        const pending = user ? await store.pendingInvitations(tx, user.id, tenantId) : [];
        if (!user || !pending.length)
          throw new AppError(
            'INVITATION_NOT_FOUND',
            `No pending invitation of ${e}${tenantId ? ` to account ${tenantId}` : ''}`,
          );
        for (const inv of pending) await send(tx, user, inv.tenant_id);
        return pending.length;
      });
    },

    /**
     * The team screen's "resend activation email" for a member of the account: a pending invitation is sent again;
     * a user who signed up and has not activated gets the activation email again (`resendSignup`); else 409.
     */
    async resendActivation(
      tenantId: string,
      userId: string,
      client: Client,
      resendSignup: (email: string, client: Client) => Promise<void>,
    ): Promise<void> {
      const user = isUuid(userId) ? await findById(db, userId) : undefined;
      const member = user ? await isMember(db, tenantId, user.id) : false;
      if (!user || !member) throw new AppError('NOT_A_MEMBER', `User ${userId} is not a member of account ${tenantId}`);
      const inv = await store.findInvitation(db, tenantId, user.id);
      if (!user.email)
        throw new AppError(
          'USER_HAS_NO_EMAIL',
          `User ${user.id} has no email address: there is no activation email to send`,
        );
      if (inv && !inv.accepted_at) return this.resend(tenantId, user.email, client);
      if (await awaitsActivation(db, user.id)) return resendSignup(user.email, client);
      throw new AppError(
        'ALREADY_ACTIVATED',
        `${user.email} has already accepted the invitation or activated the account`,
      );
    },

    /** Accepts with the link token or the code; signs the user in to the inviting account. */
    async accept(body: { userId: string; token?: string; code?: string }, client: Client) {
      const outcome = await db.transaction(async (tx) => {
        const user = isUuid(body.userId) ? await findById(tx, body.userId, true) : undefined;
        if (!user) return { error: new AppError('CODE_INVALID', 'The invitation link or code is invalid') };
        let row;
        if (body.code !== undefined) {
          const r = await codes.checkCode(tx, 'invitation', user.id, body.code.trim());
          if (!r.ok) {
            await countFailure(tx, deps.passwords, user);
            return { error: checkError(r, 'invitation code') };
          }
          row = r.row;
        } else {
          const r = await codes.checkToken(tx, ['invitation'], body.token ?? '');
          if (!r.ok) return { error: checkError(r, 'invitation link') };
          if (r.row.user_id !== user.id)
            return { error: new AppError('CODE_INVALID', 'The invitation link is invalid') };
          row = r.row;
        }
        const tenantId = row.tenant_id!;
        const inv = await store.findInvitation(tx, tenantId, user.id);
        if (!inv)
          return { error: new AppError('CODE_EXPIRED', 'The invitation was withdrawn (the membership was removed)') };
        await codes.consume(tx, row.id);
        await store.markAccepted(tx, tenantId, user.id);
        // The emailed link or code is the owner's proof: a pending membership is accepted, a temporary password dropped.
        await acceptMembership(tx, tenantId, user.id);
        if (await proveMailbox(tx, user.id)) {
          await deps.endSessions?.(tx, user.id);
          user.password_hash = null;
          user.password_temporary = false;
        }
        if (!user.verified) {
          await updateUser(tx, user.id, { verified: true });
          await deps.events.emit(tx, {
            eventKey: 'user.activated',
            tenantId,
            entity: { type: 'user', id: user.id },
            data: { userId: user.id, email: user.email, tenantId, via: 'invitation' },
          });
        }
        try {
          return {
            response: await deps.login.signIn(tx, { ...user, verified: true }, client, ['email'], { tenantId }),
          };
        } catch (err) {
          if (err instanceof AppError) return { error: err };
          throw err;
        }
      });
      if ('error' in outcome) throw outcome.error;
      return outcome.response;
    },

    /** The caller's invitations waiting for their consent (pending memberships), oldest first. */
    async listMine(userId: string) {
      const rows = await store.pendingMemberships(db, userId);
      return rows.map((r) => ({
        tenantId: r.tenant_id,
        name: r.name,
        invitedBy: r.invited_by,
        createdAt: r.created_at.toISOString(),
      }));
    },

    /**
     * The signed-in user accepts (or declines) an invitation to an account. Accepting needs the owner's own password:
     * while it is a temporary one an administrator chose, only the emailed invitation link or code accepts.
     */
    async answerMine(userId: string, tenantId: string, answer: 'accept' | 'decline'): Promise<void> {
      await db.transaction(async (tx) => {
        const user = isUuid(userId) ? await findById(tx, userId, true) : undefined;
        const mine = user ? await store.pendingMemberships(tx, user.id) : [];
        if (!user || !mine.some((m) => m.tenant_id === tenantId)) {
          throw new AppError('INVITATION_NOT_FOUND', `You have no pending invitation to account ${tenantId}`);
        }
        if (answer === 'decline') {
          // The invitation and the roles waiting with it go with the membership (ON DELETE CASCADE).
          await removeMembership(tx, tenantId, user.id);
          return;
        }
        if (user.password_temporary) {
          throw new AppError(
            'INVITATION_NEEDS_MAILBOX_PROOF',
            'Your password was set by an administrator: accept the invitation to account ' +
              `${tenantId} with the emailed invitation link or code (ask for it again with POST /identity/resources/users/v1/invitation/reset)`,
          );
        }
        await acceptMembership(tx, tenantId, user.id);
        await store.markAccepted(tx, tenantId, user.id);
        await deps.events.emit(tx, {
          eventKey: 'user.updated',
          tenantId,
          entity: { type: 'user', id: user.id },
          data: { userId: user.id, email: user.email, tenantId, changed: ['tenantIds'], reason: 'invitation_accepted' },
        });
      });
    },

    invitationSettings: (): Promise<StrategySettings> => readFlowSettings(db, 'invitation'),
    updateInvitationSettings: (patch: Partial<StrategySettings>): Promise<StrategySettings> =>
      db.transaction((tx) => writeFlowSettings(tx, 'invitation', patch)),
  };
}
