import { AppError } from '../../http/errors.ts';
import type { Queryable } from '../../storage/db.ts';
import { parseMetadata } from '../tenants/index.ts';
import { addRoles, createUserCreation, findById, type UserRow } from '../users/index.ts';
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
  const creation = createUserCreation(deps);

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
      throw new AppError(
        'UNKNOWN_IDS',
        `roleIds: a sign-up may name only default roles; not allowed: ${refused.join(', ')}`,
        {
          roleIds: refused,
        },
      );
    }
    return ids;
  }

  return async function register<T>(
    body: Omit<SignUpCommon, 'provider'> & { provider?: SignUpCommon['provider'] },
    who: SignUpIdentity,
    client: Client,
    pending: boolean,
    then: (tx: Queryable, r: Registered) => Promise<T>,
  ): Promise<T> {
    const { email, username } = who;
    if (!(await deps.environment.settings()).allowSignups) {
      throw new AppError(
        'SIGNUP_DISABLED',
        'Sign-up is disabled in this environment (allowSignups of POST /identity/resources/configurations/v1)',
      );
    }
    if ((body.provider ?? 'local') !== 'local') {
      const rule =
        'body.provider must be "local" for a self-service sign-up (social and SSO sign-up use their own routes)';
      throw new AppError('VALIDATION', rule, { fields: ['provider'] });
    }
    const metadata = body.metadata !== undefined ? parseMetadata(body.metadata, 'metadata') : {};
    await limitRequests(deps.limits, client.ip, email ?? username.toLowerCase());
    // The environment's email-domain restrictions (a new account has no rules of its own yet); with restrictions
    // active, a user without an email has no domain they admit.
    await assertEmailDomainAllowed(db, null, email, email === null ? 'username' : 'email');
    // The new account inherits the environment's password policy, so it is checked before anything is written.
    if (body.password !== undefined) await deps.passwords.validate(db, body.password, email ? { email } : {});
    const passwordHash = body.password !== undefined ? await deps.passwords.hash(body.password) : null;
    return db.transaction(async (tx) => {
      const name = body.name?.trim() ?? '';
      const invite = body.invitationToken?.trim() && deps.inviteTokens ? body.invitationToken.trim() : undefined;
      // With an account invite token the user joins that account (the token's roles) instead of creating one.
      const invited = invite ? await deps.inviteTokens!.check(tx, invite) : undefined;
      const accountName = (body.companyName?.trim() || name || email || username || '').slice(0, 255);
      const creator = { ...(email ? { creatorEmail: email } : {}), ...(name ? { creatorName: name } : {}) };
      const account = invited ? undefined : await deps.tenants.create({ name: accountName, ...creator } as never, tx);
      const tenantId = invited ?? account!.tenantId;
      const requestedRoles = await defaultRolesOnly(tx, tenantId, body.roleIds);
      // A self-registered user never chooses privileged roles: the first user of the new account gets the
      // firstUserRole roles, plus the default roles named in roleIds (defaultRolesOnly). An invite token's user
      // joins through the token (join below), which gives the membership.
      const firstUserRoles = account ? await deps.roles.firstUserRoleIds(tx, tenantId) : [];
      let user = await creation.create(tx, {
        source: 'signup',
        tenantId,
        join: !invite,
        email,
        username,
        name,
        profilePictureUrl: body.profilePictureUrl ?? null,
        phoneNumber: body.phoneNumber,
        verified: false,
        provider: 'local',
        metadata,
        passwordHash,
        roleIds: [...firstUserRoles, ...requestedRoles],
        event: () => (username ? { username } : {}),
      });
      if (pending) await store.markPending(tx, user.id);
      if (invite) {
        await deps.inviteTokens!.join(tx, user, invite);
        await addRoles(tx, tenantId, user.id, requestedRoles);
        user = (await findById(tx, user.id))!;
      }
      return then(tx, { user, tenantId, invited: Boolean(invite) });
    });
  };
}
