import { newId } from '../../lib/crypto.ts';
import { isUniqueViolation } from '../../lib/pg-errors.ts';
import { AppError } from '../../http/errors.ts';
import type { Queryable } from '../../storage/db.ts';
import type { EventsService, NewEvent } from '../events/index.ts';
import type { RolesService } from '../roles/index.ts';
import * as store from './create.store.ts';
import type { UserRow } from './store.ts';

/** Where a new user comes from: the `source` of its `user.created` event. */
export type UserSource = 'api' | 'signup' | 'invitation' | 'sso' | 'social' | 'scim' | 'migration';

/** A user to create. What a flow decides for itself (password policy, who may grant which role) it checks first. */
export interface NewUser {
  source: UserSource;
  /** The account the user starts in and (unless `join` is false) joins. */
  tenantId: string;
  /** False: no membership yet (the flow adds it itself, e.g. through an account invite token). */
  join?: boolean;
  email: string | null;
  username?: string | null;
  name?: string;
  profilePictureUrl?: string | null;
  externalId?: string | null;
  phoneNumber?: string | null;
  verified: boolean;
  provider?: string;
  managedBy?: 'gatehouse' | 'scim2' | 'external';
  metadata?: Record<string, unknown>;
  vendorMetadata?: Record<string, unknown>;
  /** Hashed by the credentials module (its policy checked by the flow, which knows the account), or imported. */
  passwordHash?: string | null;
  /** An account administrator's password for someone else: it lasts until the owner proves the mailbox. */
  passwordTemporary?: boolean;
  mfaBypass?: boolean;
  /** What a migration imports with the user. */
  imported?: {
    mustResetPassword: boolean;
    mfaEnrolled: boolean;
    authenticatorMfaSecretEnc: string | null;
    phoneNumberType: string | null;
  };
  expiresAt?: Date | null;
  /** Waits for the user's consent (gives no access until accepted). */
  pending?: boolean;
  /**
   * The membership's roles, exactly, as the flow checked them (or a resolver run after the uniqueness checks; its
   * AppError rejects the user). Undefined: the account's default roles, or with `defaults: 'firstMember'` the
   * first-user roles while the account has no member yet (a batch gives default roles).
   */
  roleIds?: string[] | (() => Promise<string[] | undefined>);
  defaults?: 'default' | 'firstMember';
  /** Fields the flow adds to the `user.created` event (e.g. the SSO provider), given the roles the user got. */
  event?: (roleIds: string[]) => Record<string, unknown> | Promise<Record<string, unknown>>;
}

export interface UserCreationDeps {
  roles: Pick<RolesService, 'defaultRoleIds' | 'firstUserRoleIds'>;
  /** The outbox: `user.created` for every user, with its source. */
  events?: Pick<EventsService, 'inlineMany'>;
  /** Password history of a user created with a password. */
  passwords?: { remember: (q: Queryable, userId: string, hash: string) => Promise<void> };
}

export const normaliseEmail = (email: string | null | undefined): string | null =>
  email ? email.trim().toLowerCase() : null;

/** The 409 of a taken email, username or phone; `source` picks what the client should do instead. */
export function taken(
  kind: 'email' | 'username' | 'phone',
  user: Pick<NewUser, 'email' | 'username' | 'phoneNumber' | 'source'>,
): AppError {
  if (kind === 'username') return new AppError('USERNAME_TAKEN', `Username ${user.username} is taken`);
  if (kind === 'phone') return new AppError('PHONE_TAKEN', `Phone number ${user.phoneNumber} belongs to another user`);
  const hint =
    user.source === 'signup' ? '; sign in instead' : user.source === 'api' ? '; add them to the account instead' : '';
  return new AppError('USER_EXISTS', `A user with email ${user.email} already exists in the environment${hint}`);
}

/** Which key a unique violation of the insert names (the indexes users_email, users_username, the phone's key). */
function violated(err: unknown): 'email' | 'username' | 'phone' {
  // The email triggers of secondary addresses (migration 0034) raise unique_violation without a constraint name.
  const c =
    (err as { constraint?: string }).constraint ??
    String((err as Error).message).match(/constraint "([^"]+)"/)?.[1] ??
    '';
  return c.includes('username') ? 'username' : c.includes('phone') ? 'phone' : 'email';
}

/**
 * User creation, the one way a users row (with its membership and roles) comes to exist: the API, sign-up,
 * invitations, SSO and social sign-up, SCIM and migrations all create through it. The rules every flow shares: the email lower-cased,
 * a taken email / username / phone is a 409, a live account, the membership with its (default) roles, and
 * `user.created` with the source, all in one statement in the caller's transaction.
 */
export function createUserCreation(deps: UserCreationDeps) {
  async function rolesOf(q: Queryable, u: NewUser, given: string[] | undefined): Promise<string[]> {
    if (u.join === false) return [];
    if (given) return [...new Set(given)];
    if (u.defaults === 'firstMember') {
      const { rows } = await q.query('SELECT 1 FROM user_tenants WHERE tenant_id = $1 LIMIT 1', [u.tenantId]);
      if (rows.length === 0) return deps.roles.firstUserRoleIds(q, u.tenantId);
    }
    return deps.roles.defaultRoleIds(q, u.tenantId);
  }

  const resolve = async (u: NewUser): Promise<string[] | undefined> =>
    typeof u.roleIds === 'function' ? u.roleIds() : u.roleIds;

  function rowOf(u: NewUser, email: string | null, roleIds: string[]): store.NewUserRow {
    return {
      id: newId(),
      email,
      username: u.username ?? null,
      name: u.name ?? '',
      profile_picture_url: u.profilePictureUrl ?? null,
      external_id: u.externalId ?? null,
      verified: u.verified,
      mfa_bypass: u.mfaBypass ?? false,
      provider: u.provider ?? 'local',
      managed_by: u.managedBy ?? 'gatehouse',
      metadata: u.metadata ?? {},
      vendor_metadata: u.vendorMetadata ?? {},
      password_hash: u.passwordHash ?? null,
      password_temporary: u.passwordTemporary ?? false,
      must_reset_password: u.imported?.mustResetPassword ?? false,
      mfa_enrolled: u.imported?.mfaEnrolled ?? false,
      authenticator_mfa_secret_enc: u.imported?.authenticatorMfaSecretEnc ?? null,
      phone_number_type: u.imported?.phoneNumberType ?? null,
      active_tenant_id: u.tenantId,
      join_account: u.join !== false,
      expires_at: u.expiresAt ?? null,
      pending: u.pending ?? false,
      role_ids: roleIds,
      phone: u.phoneNumber ?? null,
    };
  }

  async function eventOf(u: NewUser, row: store.NewUserRow): Promise<NewEvent> {
    const extra = u.event ? await u.event(row.role_ids) : {};
    const data = { userId: row.id, email: row.email, tenantId: u.tenantId, ...extra, source: u.source };
    return { eventKey: 'user.created', tenantId: u.tenantId, entity: { type: 'user', id: row.id }, data };
  }

  /** Writes checked rows: one statement, then the password history of those with a password. */
  async function write(q: Queryable, list: NewUser[], rows: store.NewUserRow[], answer: boolean) {
    const events = deps.events?.inlineMany(await Promise.all(list.map((u, i) => eventOf(u, rows[i]))));
    const out = await store.insertUsers(q, rows, events, answer);
    events?.written();
    if (out.joined < rows.filter((r) => r.join_account).length) {
      const lost = rows.find((r) => r.join_account)!;
      throw new AppError('ACCOUNT_NOT_FOUND', `No account with tenantId ${lost.active_tenant_id}`);
    }
    for (const r of rows) if (r.password_hash) await deps.passwords?.remember(q, r.id, r.password_hash);
    return out.users;
  }

  return {
    /** Creates one user in the caller's transaction; a taken email, username or phone is a 409 (the statement fails). */
    async create(q: Queryable, u: NewUser): Promise<UserRow> {
      const email = normaliseEmail(u.email);
      const row = rowOf(u, email, await rolesOf(q, u, await resolve(u)));
      try {
        return (await write(q, [u], [row], true))[0];
      } catch (err) {
        if (isUniqueViolation(err)) throw taken(violated(err), { ...u, email });
        throw err;
      }
    },

    /**
     * Creates a batch with the same rules, each user decided in order as `create` would decide them one after another
     * (an earlier accepted user claims its email, username and phone): one statement reads what the checks need, one
     * writes every accepted user. Answers the ids of the accepted users and, by index, each rejection. A unique
     * violation (a concurrent writer took a key after the checks) is thrown: the caller decides (e.g. one by one).
     */
    async createMany(
      q: Queryable,
      list: NewUser[],
    ): Promise<{ created: { index: number; id: string }[]; rejected: { index: number; error: AppError }[] }> {
      const distinct = <T>(xs: (T | null | undefined)[]) => [
        ...new Set(xs.filter((x): x is T => x !== undefined && x !== null)),
      ];
      const emailsOf = list.map((u) => normaliseEmail(u.email));
      const facts = await store.batchFacts(q, {
        tenantIds: distinct(list.map((u) => u.tenantId)),
        emails: distinct(emailsOf),
        usernames: distinct(list.map((u) => u.username)),
        phones: distinct(list.map((u) => u.phoneNumber)),
      });
      const rejected: { index: number; error: AppError }[] = [];
      const accepted: { index: number; u: NewUser; row: store.NewUserRow }[] = [];
      for (const [index, u] of list.entries()) {
        const email = emailsOf[index];
        const name = u.username ? facts.usernames.get(u.username) : undefined;
        let error: AppError | undefined;
        if (!facts.accounts.has(u.tenantId))
          error = new AppError('ACCOUNT_NOT_FOUND', `No account with tenantId ${u.tenantId}`);
        else if (email && facts.emails.has(email)) error = taken('email', { ...u, email });
        else if (name?.taken) error = taken('username', u);
        else if (u.phoneNumber && facts.phones.has(u.phoneNumber)) error = taken('phone', u);
        let roleIds: string[] | undefined;
        if (!error) {
          try {
            roleIds = await resolve(u);
          } catch (err) {
            if (!(err instanceof AppError)) throw err;
            error = err;
          }
        }
        if (error) {
          rejected.push({ index, error });
          continue;
        }
        if (email) facts.emails.add(email);
        // Every spelling of the same username (lower() equal) is taken now.
        if (name) for (const other of facts.usernames.values()) if (other.lower === name.lower) other.taken = true;
        if (u.phoneNumber) facts.phones.add(u.phoneNumber);
        const defaults = u.join === false ? [] : facts.defaults.get(u.tenantId)!;
        accepted.push({ index, u, row: rowOf(u, email, roleIds ? [...new Set(roleIds)] : defaults) });
      }
      if (accepted.length)
        await write(
          q,
          accepted.map((a) => a.u),
          accepted.map((a) => a.row),
          false,
        );
      return { created: accepted.map((a) => ({ index: a.index, id: a.row.id })), rejected };
    },
  };
}

export type UserCreation = ReturnType<typeof createUserCreation>;
