import { newId } from '../../lib/crypto.ts';
import { AppError } from '../../http/errors.ts';
import type { Queryable } from '../../storage/db.ts';
import { parseMetadata } from '../tenants/index.ts';
import {
  addMembership, addPhone, addRoles, findByEmail, findById, findByUsername, insertUser, type UserRow,
} from '../users/index.ts';
import { limitRequests, type Client } from '../passwordless/index.ts';
import { assertEmailDomainAllowed } from '../restrictions/index.ts';
import type { SignUpCommon } from './schema.ts';
import type { SignupDeps } from './service.ts';
import * as store from './store.ts';

/** Whom a sign-up creates: a user named by an email (POST .../signUp), or by a username alone (.../signUp/username). */
export type SignUpIdentity = { email: string; username: string | null } | { email: null; username: string };

/** The new user, the account they belong to, and whether an account invite token put them there. */
export interface Registered {
  user: UserRow;
  tenantId: string;
  invited: boolean;
}

/**
 * The part of every self-service sign-up that does not depend on how the user is named: the environment allows
 * sign-up, the password passes its policy, then in one transaction a new account (or the invite token's) with the
 * user, membership, first-user roles, the default roles of `roleIds`, and `user.created`. `pending`: the user must
 * activate by email before signing in. `then` runs in the same transaction, so its failure leaves nothing behind.
 */
export function createRegistration(deps: SignupDeps) {
  const { db } = deps;

  /**
   * `roleIds` of a public sign-up: anyone may call it, so it may name only the account's default roles (which every
   * new member gets anyway); those are added to the roles the sign-up gives. Any other role (e.g. admin) is a 400 and,
   * thrown inside the transaction, leaves nothing behind.
   */
  async function defaultRolesOnly(tx: Queryable, tenantId: string, roleIds: string[] | undefined): Promise<string[]> {
    if (!roleIds?.length) return [];
    const defaults = new Set(await deps.roles.defaultRoleIds(tx, tenantId));
    const ids = roleIds.map((r) => r.trim().toLowerCase());
    const refused = ids.filter((r) => !defaults.has(r));
    if (refused.length) {
      throw new AppError('UNKNOWN_IDS', `roleIds: a sign-up may name only default roles; not allowed: ${refused.join(', ')}`, {
        roleIds: refused,
      });
    }
    return ids;
  }

  return async function register<T>(
    body: Omit<SignUpCommon, 'provider'> & { provider?: SignUpCommon['provider'] },
    who: SignUpIdentity, client: Client, pending: boolean,
    then: (tx: Queryable, r: Registered) => Promise<T>,
  ): Promise<T> {
    const { email, username } = who;
    if (!(await deps.environment.settings()).allowSignups) {
      throw new AppError('SIGNUP_DISABLED', 'Sign-up is disabled in this environment (allowSignups of POST /identity/resources/configurations/v1)');
    }
    if ((body.provider ?? 'local') !== 'local') {
      const rule = 'body.provider must be "local" for a self-service sign-up (social and SSO sign-up use their own routes)';
      throw new AppError('VALIDATION', rule, { fields: ['provider'] });
    }
    const metadata = body.metadata !== undefined ? parseMetadata(body.metadata, 'metadata') : {};
    limitRequests(deps.limits, client.ip, email ?? username.toLowerCase());
    // The environment's email-domain restrictions (a new account has no rules of its own yet); with restrictions
    // active, a user without an email has no domain they admit.
    await assertEmailDomainAllowed(db, null, email, email === null ? 'username' : 'email');
    // The new account inherits the environment's password policy, so it is checked before anything is written.
    if (body.password !== undefined) await deps.passwords.validate(db, body.password, email ? { email } : {});
    const passwordHash = body.password !== undefined ? await deps.passwords.hash(body.password) : null;
    return db.transaction(async (tx) => {
      if (email && (await findByEmail(tx, email))) {
        throw new AppError('USER_EXISTS', `A user with email ${email} already exists; sign in instead`);
      }
      if (username && (await findByUsername(tx, username))) throw new AppError('USERNAME_TAKEN', `Username ${username} is taken`);
      const name = body.name?.trim() ?? '';
      const invite = body.invitationToken?.trim() && deps.inviteTokens ? body.invitationToken.trim() : undefined;
      // With an account invite token the user joins that account (the token's roles) instead of creating one.
      const invited = invite ? await deps.inviteTokens!.check(tx, invite) : undefined;
      const accountName = (body.companyName?.trim() || name || email || username || '').slice(0, 255);
      const creator = { ...(email ? { creatorEmail: email } : {}), ...(name ? { creatorName: name } : {}) };
      const account = invited ? undefined : await deps.tenants.create({ name: accountName, ...creator } as never, tx);
      const tenantId = invited ?? account!.tenantId;
      const requestedRoles = await defaultRolesOnly(tx, tenantId, body.roleIds);
      const id = newId();
      await insertUser(tx, {
        id, email, username, name, profile_picture_url: body.profilePictureUrl ?? null, verified: false,
        provider: 'local', metadata, vendor_metadata: {}, password_hash: passwordHash, active_tenant_id: tenantId,
      });
      if (passwordHash) await deps.passwords.remember(tx, id, passwordHash);
      if (body.phoneNumber && !(await addPhone(tx, id, body.phoneNumber))) {
        throw new AppError('PHONE_TAKEN', `Phone number ${body.phoneNumber} belongs to another user`);
      }
      if (account) {
        const subAccess = account.subAccountAccessType !== 'defaultOff';
        await addMembership(tx, account.tenantId, id, { subAccess, expiresAt: null });
        // A self-registered user never chooses privileged roles: the first user of the new account gets the
        // firstUserRole roles, plus the default roles named in roleIds (defaultRolesOnly).
        const firstUserRoles = await deps.roles.firstUserRoleIds(tx, account.tenantId);
        await addRoles(tx, account.tenantId, id, [...firstUserRoles, ...requestedRoles]);
      }
      if (pending) await store.markPending(tx, id);
      const created = () => deps.events.emit(tx, {
        eventKey: 'user.created', tenantId, entity: { type: 'user', id },
        data: { userId: id, email, ...(username ? { username } : {}), tenantId, source: 'signup' },
      });
      if (invite) {
        await created();
        await deps.inviteTokens!.join(tx, (await findById(tx, id))!, invite);
        await addRoles(tx, tenantId, id, requestedRoles);
      }
      const answer = await then(tx, { user: (await findById(tx, id))!, tenantId, invited: Boolean(invite) });
      if (!invite) await created();
      return answer;
    });
  };
}
