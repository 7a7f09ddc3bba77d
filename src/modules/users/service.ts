import { isUuid } from '../../lib/pg-errors.ts';
import { AppError } from '../../http/errors.ts';
import type { Db, Queryable } from '../../storage/db.ts';
import type { EnvironmentService } from '../environment/index.ts';
import type { PasswordService } from '../credentials/index.ts';
import type { Grantor, RolesService } from '../roles/index.ts';
import { parseMetadata, type TenantsService } from '../tenants/index.ts';
import { listUsers } from './list.store.ts';
import { accessTo, accessView, accountRecordsOf, accountsOf, joinAccount } from './memberships.ts';
import { buildUserRecord } from './record.ts';
import { groupsOfUsers } from '../groups/index.ts';
import { assertEmailDomainAllowed } from '../restrictions/index.ts';
import type { CreateUser, ListUsersQuery, User } from './schema.ts';
import { createProfileOps, VENDOR_ONLY_CREATE } from './profile.service.ts';
import { createEmailOps } from './email.service.ts';
import { createUserEmailOps, type EmailCodesPort } from './emails.service.ts';
import { createAccountOps, type Inviter } from './accounts.service.ts';
import { createUsernameOps } from './usernames.service.ts';
import { createSearchOps } from './search.service.ts';
import { createUnlockOps } from './unlock.service.ts';
import { createPasswordChangeOps, type PasswordChangeChecks } from './password.service.ts';
import { createBulkOps } from './bulk.service.ts';
import * as store from './store.ts';
import { createUserCreation } from './create.ts';
import type { EventsService } from '../events/index.ts';

export interface UsersDeps {
  db: Db;
  tenants: TenantsService;
  roles: RolesService;
  passwords: PasswordService;
  environment: EnvironmentService;
  /** The outbox: user.created, user.updated, user.deleted, user.locked, user.unlocked; the bus: user.email_changed. */
  events?: EventsService;
  /** How codes to new secondary addresses are keyed, sent and limited; without it only verified ones are added. */
  emailCodes?: EmailCodesPort;
  /** What a password change borrows from the sign-in (auth): its limits, failure count and the end of sessions. */
  passwordChecks?: PasswordChangeChecks;
  /** The invitation of a user to an account (the invitations module's); without it the invite routes are absent. */
  invite?: Inviter;
}

export type UsersService = ReturnType<typeof createUsersService>;

/** Users: environment-wide identities, their memberships of accounts and their roles per account. */
export function createUsersService(deps: UsersDeps) {
  const { db, roles } = deps;

  async function requireUser(q: Queryable, userId: string, lock = false): Promise<store.UserRow> {
    const user = isUuid(userId) ? await store.findById(q, userId, lock) : undefined;
    if (!user) throw new AppError('USER_NOT_FOUND', `No user with id ${userId}`);
    return user;
  }

  async function requireMembership(q: Queryable, tenantId: string, userId: string): Promise<store.UserRow> {
    const user = await requireUser(q, userId);
    const { rows } = await q.query('SELECT 1 FROM user_tenants WHERE tenant_id = $1 AND user_id = $2', [
      tenantId,
      userId,
    ]);
    if (rows.length === 0) throw new AppError('NOT_A_MEMBER', `User ${userId} is not a member of account ${tenantId}`);
    return user;
  }

  const record = (
    q: Queryable,
    user: store.UserRow,
    tenantId?: string,
    known?: Parameters<typeof buildUserRecord>[4],
  ) => buildUserRecord(q, roles, user, tenantId, known);

  async function expiryFor(seconds: number | undefined, q: Queryable = db): Promise<Date | null> {
    if (seconds === undefined) return null;
    if (!(await deps.environment.settings(q)).temporaryUsersEnabled) {
      throw new AppError(
        'TEMPORARY_USERS_DISABLED',
        'expirationInSeconds needs temporary users to be enabled (PUT /identity/resources/users/temporary/v1/configuration)',
      );
    }
    return new Date(Date.now() + seconds * 1000);
  }

  const core = { requireUser, requireMembership, record };
  const creation = createUserCreation({ roles, events: deps.events, passwords: deps.passwords });
  const accountOps = createAccountOps(deps, core);

  return {
    requireUser,
    requireMembership,
    record,
    // The global update and the user's own (profile.service.ts); lookup, change and password check by email (email.service.ts).
    ...createProfileOps(deps, core),
    ...createEmailOps(deps, core),
    ...createUserEmailOps(deps, core),
    // Sub-account reach, role replacement, counts per account, member statistics (accounts.service.ts).
    ...accountOps,
    // Usernames, the fuzzy search, self-service unlock, bulk invitations / roles / account moves (their files).
    ...createUsernameOps(deps, core),
    ...createSearchOps(deps, core),
    ...createUnlockOps(deps, core),
    ...createPasswordChangeOps(deps, core),
    ...createBulkOps(deps, core, () => accountOps.inviter()),

    /**
     * Creates a user in an account. An email already in the environment is a 409 (add the user to the account instead).
     * A user's token (`by`): a field of VENDOR_ONLY_CREATE is a 400 naming it; roleIds beyond the user are a 403.
     */
    async create(tenantId: string, body: CreateUser, by: Grantor = { kind: 'vendor' }): Promise<User> {
      if (by.kind === 'user') {
        const refused = VENDOR_ONLY_CREATE.filter((k) => (body as Record<string, unknown>)[k] !== undefined);
        if (refused.length > 0) {
          throw new AppError(
            'VALIDATION',
            `${refused.map((k) => `body.${k}`).join(', ')}: only an environment token sets ${refused.join(', ')} of a user`,
            { fields: refused },
          );
        }
      }
      const email = body.email.trim().toLowerCase();
      const metadata = body.metadata !== undefined ? parseMetadata(body.metadata, 'metadata') : {};
      const vendorMetadata =
        body.vendorMetadata !== undefined ? parseMetadata(body.vendorMetadata, 'vendorMetadata') : {};
      const expiresAt = await expiryFor(body.expirationInSeconds);
      return db.transaction(async (tx) => {
        await deps.tenants.requireLive(tx, tenantId);
        await assertEmailDomainAllowed(tx, tenantId, email, 'email');
        await roles.assertGrantable(tx, tenantId, by, body.roleIds ?? []);
        let passwordHash: string | null = null;
        if (body.password !== undefined) {
          await deps.passwords.validate(tx, body.password, { tenantId, email });
          passwordHash = await deps.passwords.hash(body.password);
        }
        const user = await creation.create(tx, {
          source: 'api',
          tenantId,
          email,
          username: body.username ?? null,
          name: body.name ?? '',
          profilePictureUrl: body.profilePictureUrl ?? null,
          externalId: body.externalId ?? null,
          phoneNumber: body.phoneNumber,
          verified: body.verified ?? false,
          mfaBypass: body.mfaBypass ?? false,
          provider: body.provider ?? 'local',
          metadata,
          vendorMetadata,
          passwordHash,
          expiresAt,
          roleIds: body.roleIds?.length ? body.roleIds : undefined,
          defaults: 'firstMember',
          // An account administrator's password for someone else lasts until the owner proves the mailbox.
          passwordTemporary: passwordHash !== null && by.kind === 'user',
          event: async (ids) => ({ name: body.name ?? '', roles: (await roles.rolesByIds(tx, ids)).map((r) => r.key) }),
        });
        return record(tx, user, tenantId);
      });
    },

    async get(userId: string, tenantId?: string): Promise<User> {
      const user = tenantId ? await requireMembership(db, tenantId, userId) : await requireUser(db, userId);
      return record(db, user, tenantId);
    },

    /** With an account: leaves that account (a user left with none is deleted). Without: deletes the user. */
    async remove(userId: string, tenantId?: string): Promise<void> {
      await db.transaction(async (tx) => {
        if (!tenantId) {
          const user = await requireUser(tx, userId, true);
          await store.deleteUser(tx, userId);
          await deps.events?.emit(tx, {
            eventKey: 'user.deleted',
            tenantId: user.active_tenant_id,
            entity: { type: 'user', id: userId },
            data: { userId, email: user.email, tenantId: null, scope: 'environment' },
          });
          return;
        }
        const member = await requireMembership(tx, tenantId, userId);
        await store.removeMembership(tx, tenantId, userId);
        await store.settleAfterLeaving(tx, [userId], tenantId);
        await deps.events?.emit(tx, {
          eventKey: 'user.deleted',
          tenantId,
          entity: { type: 'user', id: userId },
          data: { userId, email: member.email, tenantId, scope: 'account' },
        });
      });
    },

    /** account.removed: every membership goes (users left with none are deleted); user.deleted (scope account) for each. */
    async forgetAccount(tx: Queryable, tenantId: string): Promise<void> {
      const gone = await store.removeAccountUsers(tx, tenantId);
      await deps.events?.emitMany(
        tx,
        gone.map((u) => ({
          eventKey: 'user.deleted' as const,
          tenantId,
          entity: { type: 'user', id: u.user_id },
          data: { userId: u.user_id, email: u.email, tenantId, scope: 'account', reason: 'account_deleted' },
        })),
      );
    },

    async addToAccount(userId: string, tenantId: string, roleIds?: string[]): Promise<User> {
      return db.transaction(async (tx) => {
        const joining = await requireUser(tx, userId, true);
        await assertEmailDomainAllowed(tx, tenantId, joining.email, 'email');
        await joinAccount(tx, deps, tenantId, userId, roleIds, null);
        return record(tx, (await store.findById(tx, userId))!, tenantId);
      });
    },

    async setActiveAccount(userId: string, tenantId: string): Promise<User> {
      return db.transaction(async (tx) => {
        await requireMembership(tx, tenantId, userId);
        await store.updateUser(tx, userId, { active_tenant_id: tenantId });
        return record(tx, (await store.findById(tx, userId))!, tenantId);
      });
    },

    /** Adds roles to a member; 400 for roles out of the account's reach, 403 for roles beyond the caller. */
    async assignRoles(tenantId: string, userId: string, roleIds: string[], by: Grantor) {
      return db.transaction(async (tx) => {
        await requireMembership(tx, tenantId, userId);
        await roles.assertGrantable(tx, tenantId, by, roleIds);
        await store.addRoles(tx, tenantId, userId, roleIds);
        return { tenantId, userId, roles: (await record(tx, (await store.findById(tx, userId))!, tenantId)).roles };
      });
    },

    /** Takes roles from a member (ids naming no role are ignored); 403 for roles beyond the caller. */
    async unassignRoles(tenantId: string, userId: string, roleIds: string[], by: Grantor) {
      return db.transaction(async (tx) => {
        await requireMembership(tx, tenantId, userId);
        await roles.assertRevocable(tx, tenantId, by, roleIds);
        await store.removeRoles(tx, tenantId, userId, roleIds);
        return { tenantId, userId, roles: (await record(tx, (await store.findById(tx, userId))!, tenantId)).roles };
      });
    },

    async setMembershipFlag(
      tenantId: string,
      userId: string,
      values: { is_disabled?: boolean; sub_account_access_allowed?: boolean; temporary_expiration_date?: Date | null },
    ) {
      await requireMembership(db, tenantId, userId);
      await store.updateMembership(db, tenantId, userId, values);
      return record(db, (await store.findById(db, userId))!, tenantId);
    },

    async setTemporary(tenantId: string, userId: string, seconds: number | null) {
      const expiresAt = seconds === null ? null : await expiryFor(seconds);
      return this.setMembershipFlag(tenantId, userId, { temporary_expiration_date: expiresAt });
    },

    async setFlags(
      userId: string,
      values: Partial<
        Pick<store.UserRow, 'is_locked' | 'locked_until' | 'failed_attempts' | 'verified' | 'invisible' | 'super_user'>
      >,
    ) {
      return db.transaction(async (tx) => {
        const user = await requireUser(tx, userId, true);
        await store.updateUser(tx, userId, values);
        const data = { userId, email: user.email, tenantId: user.active_tenant_id };
        const entity = { type: 'user', id: userId };
        if (values.is_locked !== undefined) {
          // An administrator's lock or unlock (the lockout policy's own lock is emitted by the sign-in).
          await deps.events?.emit(tx, {
            eventKey: values.is_locked ? 'user.locked' : 'user.unlocked',
            tenantId: user.active_tenant_id,
            entity,
            data: { ...data, reason: 'administrator' },
          });
        } else {
          await deps.events?.emit(tx, {
            eventKey: 'user.updated',
            tenantId: user.active_tenant_id,
            entity,
            data: { ...data, changed: Object.keys(values) },
          });
        }
        return record(tx, (await store.findById(tx, userId))!);
      });
    },

    async temporaryConfig(enabled?: boolean): Promise<{ enabled: boolean }> {
      if (enabled !== undefined) await deps.environment.updateSettings({ temporaryUsersEnabled: enabled });
      return { enabled: (await deps.environment.settings()).temporaryUsersEnabled };
    },

    async list(q: ListUsersQuery, tenantId?: string) {
      const limit = q._limit ?? 50;
      const page = q._offset ?? 0;
      const ident = q._identifier?.trim();
      const { rows, total } = await listUsers(db, {
        limit,
        page,
        tenantId: tenantId ?? q._tenantId,
        email: q._email ?? (ident && (q._identifierType ?? 'email') === 'email' ? ident : undefined),
        username: ident && q._identifierType === 'username' ? ident : undefined,
        phone: ident && q._identifierType === 'phoneNumber' ? ident : undefined,
        filter: q._filter?.trim() || undefined,
        sortBy: q._sortBy ?? 'createdAt',
        order: q._order ?? 'ASC',
      });
      const items: User[] = [];
      const groups = await groupsOfUsers(
        db,
        rows.map((r) => r.id),
      );
      for (const row of rows) items.push(await record(db, row, tenantId, { groups }));
      return { items, total, limit, page };
    },

    // Membership access (memberships.ts).
    accessTo,
    accessView,
    /** The accounts a user belongs to, with names. */
    accountsOf: (userId: string, q: Queryable = db): Promise<{ tenantId: string; name: string }[]> =>
      accountsOf(userId, q),
    /**
     * The current user's accounts as the browser SDK reads them: account records with the environment as `vendorId`,
     * and the active one (an account reached through sub-account access is not among the memberships).
     */
    async myAccounts(userId: string, activeTenantId: string) {
      const vendorId = deps.environment.id;
      const tenants = (await accountRecordsOf(userId, db)).map((a) => ({ ...a, vendorId }));
      const found = tenants.find((a) => a.tenantId === activeTenantId);
      const other = found ? undefined : await deps.tenants.get(activeTenantId);
      return { tenants, activeTenant: found ?? (other ? { ...other, vendorId } : undefined) };
    },
  };
}
