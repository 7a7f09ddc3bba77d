import { isUuid } from '../../lib/pg-errors.ts';
import { AppError } from '../../http/errors.ts';
import type { Db, Queryable } from '../../storage/db.ts';
import type { LoginService } from '../auth/index.ts';
import type { PasswordService } from '../credentials/index.ts';
import type { EnvironmentService } from '../environment/index.ts';
import type { EventsService } from '../events/index.ts';
import type { RolesService } from '../roles/index.ts';
import type { TenantsService } from '../tenants/index.ts';
import { findByEmail, findById, proveMailbox, updateUser, type UserRow } from '../users/index.ts';
import {
  checkError,
  countFailure,
  createEqualizer,
  limitRequests,
  readFlowSettings,
  writeFlowSettings,
  type Client,
  type CodeBook,
  type CodeLimits,
  type Delivery,
  type StrategySettings,
} from '../passwordless/index.ts';
import { createRegistration } from './register.ts';
import type { SignUpBody, SignUpUsernameBody } from './schema.ts';
import * as store from './store.ts';

export interface SignupDeps {
  db: Db;
  environment: EnvironmentService;
  tenants: TenantsService;
  roles: RolesService;
  passwords: PasswordService;
  login: LoginService;
  events: EventsService;
  codes: CodeBook;
  delivery: Delivery;
  limits: CodeLimits;
  publicUrl: string;
  /** Account invite tokens (invitations module): sign-up with `invitationToken` joins that account instead of creating one. */
  inviteTokens?: {
    check(q: Queryable, token: string): Promise<string>;
    join(q: Queryable, user: UserRow, token: string): Promise<string>;
  };
  /** Ends the user's sessions in the caller's transaction (activation dropped a temporary password). */
  endSessions?: (q: Queryable, userId: string) => Promise<unknown>;
}

export type SignupService = ReturnType<typeof createSignupService>;

/**
 * Self-service sign-up (when the environment allows it): a new account and its first user, who activates by the
 * emailed link or code before signing in. Activation signs the user in (wire.md section 4).
 */
export function createSignupService(deps: SignupDeps) {
  const { db, codes } = deps;
  const resendTiming = createEqualizer();
  const register = createRegistration(deps);

  /** Issues a fresh activation secret (replacing earlier ones) and emails it per the activation strategy. */
  async function sendActivation(q: Queryable, user: UserRow, tenantId: string | null) {
    const s = await readFlowSettings(q, 'activation');
    const issued = await codes.issue(q, {
      purpose: 'activation',
      userId: user.id,
      ttlSeconds: s.codeExpiration * 60,
      link: true,
      code: s.strategy === 'code',
    });
    await deps.delivery.sendEmail(q, {
      type: 'ActivateUser',
      to: user.email,
      tenantId,
      vars: {
        name: user.name,
        email: user.email ?? '',
        expiresInMinutes: String(s.codeExpiration),
        ...(issued.code ? { code: issued.code } : {}),
      },
      linkParams: { userId: user.id, token: issued.token! },
    });
    return issued;
  }

  /** Checks an activation link token or code of a user; a wrong code counts toward lockout (committed). */
  async function check(tx: Queryable, userId: string, by: { token?: string; code?: string }) {
    const user = isUuid(userId) ? await findById(tx, userId, true) : undefined;
    if (!user) return { error: new AppError('CODE_INVALID', 'The activation link or code is invalid') };
    if (by.code !== undefined) {
      const r = await codes.checkCode(tx, 'activation', user.id, by.code.trim());
      if (!r.ok) {
        await countFailure(tx, deps.passwords, user);
        return { error: checkError(r, 'activation code') };
      }
      return { user, rowId: r.row.id };
    }
    const r = await codes.checkToken(tx, ['activation'], by.token ?? '');
    if (!r.ok) return { error: checkError(r, 'activation link') };
    if (r.row.user_id !== user.id) return { error: new AppError('CODE_INVALID', 'The activation link is invalid') };
    return { user, rowId: r.row.id };
  }

  return {
    /**
     * A sign-in gate: a user who signed up and has not activated cannot sign in (refresh is not affected). `prefetched`:
     * the value of `gatePrefetch` when the sign-in read it with the user.
     */
    gate: async (q: Queryable, a: { stage: 'login' | 'refresh'; user: UserRow; prefetched?: unknown }) => {
      if (a.stage === 'refresh') return;
      const pending = typeof a.prefetched === 'boolean' ? a.prefetched : await store.isPending(q, a.user.id);
      if (pending)
        throw new AppError(
          'USER_NOT_ACTIVATED',
          'Activate the account first with the link or code we emailed (resend: POST /identity/resources/users/v1/activate/reset)',
        );
    },

    gatePrefetch: store.pendingSql,

    async signUp(body: SignUpBody, client: Client) {
      const email = body.email.trim().toLowerCase();
      return register(
        body,
        { email, username: body.username ?? null },
        client,
        true,
        async (tx, { user, tenantId }) => {
          if (!body.skipInviteEmail) await sendActivation(tx, user, tenantId);
          return {
            shouldActivate: true,
            userId: user.id,
            tenantId,
            provider: 'local' as const,
            email,
            ...(user.username ? { username: user.username } : {}),
            name: user.name,
          };
        },
      );
    },

    /**
     * Sign-up with a username and no email: the same rules and account creation as `signUp`, but there is no mailbox
     * to activate by, so the user is not pending and is signed in at once (`shouldActivate: false`, `authResponse`).
     * The password is required: without an email it could never be set or reset later.
     */
    async signUpWithUsername(body: SignUpUsernameBody, client: Client) {
      if (body.password === undefined) {
        throw new AppError(
          'VALIDATION',
          'body.password is required: a user signed up with a username has no email to set or reset a password by',
          { fields: ['password'] },
        );
      }
      return register(body, { email: null, username: body.username }, client, false, async (tx, { user, tenantId }) => {
        // A gate that refuses the sign-in (e.g. the invite token's account restricts IPs) does not undo the sign-up:
        // the answer then carries no tokens and the user meets the refusal at the sign-in route.
        const authResponse = await deps.login.signIn(tx, user, client, ['pwd']).catch((err: unknown) => {
          if (err instanceof AppError) return undefined;
          throw err;
        });
        return { shouldActivate: false, userId: user.id, tenantId, ...(authResponse ? { authResponse } : {}) };
      });
    },

    /**
     * Activates with the emailed link token or code: sets the password when the user has none (or gives one), marks
     * the email verified, and signs in.
     */
    async activate(body: { userId: string; token?: string; code?: string; password?: string }, client: Client) {
      const outcome = await db.transaction(async (tx) => {
        const found = await check(tx, body.userId, body);
        if (found.error) return { error: found.error };
        let user = found.user;
        // An administrator's temporary password is dropped by this proof of the mailbox: the owner sets their own.
        const ownPassword = user.password_hash && !user.password_temporary;
        if (!ownPassword && body.password === undefined)
          return {
            error: new AppError('VALIDATION', 'body.password is required: the user has no password of their own yet'),
          };
        const values: Record<string, unknown> = { verified: true };
        if (body.password !== undefined) {
          // A weak password is answered without consuming the link, so the user can try another one.
          try {
            await deps.passwords.validate(tx, body.password, {
              tenantId: user.active_tenant_id ?? undefined,
              userId: user.id,
              email: user.email ?? undefined,
            });
          } catch (err) {
            if (err instanceof AppError) return { error: err };
            throw err;
          }
          values.password_hash = await deps.passwords.hash(body.password);
        }
        await codes.consume(tx, found.rowId);
        if (await proveMailbox(tx, user.id)) await deps.endSessions?.(tx, user.id);
        await updateUser(tx, user.id, values);
        if (values.password_hash) await deps.passwords.remember(tx, user.id, values.password_hash as string);
        user = { ...user, ...values } as UserRow;
        // Activated: a signed-up user leaves the pending list, or a user made by the vendor or a directory proves the
        // mailbox for the first time (invitations emit their own on acceptance).
        const wasPending = await store.clearPending(tx, user.id);
        if (wasPending || !found.user.verified) {
          await deps.events.emit(tx, {
            eventKey: 'user.activated',
            tenantId: user.active_tenant_id,
            entity: { type: 'user', id: user.id },
            data: { userId: user.id, email: user.email },
          });
        }
        try {
          return {
            response: await deps.login.signIn(
              tx,
              user,
              client,
              body.password !== undefined ? ['pwd', 'email'] : ['email'],
            ),
          };
        } catch (err) {
          if (err instanceof AppError) return { error: err };
          throw err;
        }
      });
      if ('error' in outcome) throw outcome.error;
      return outcome.response;
    },

    /** Whether activation must set a password (the link must be valid). */
    async strategy(userId: string, token: string): Promise<{ shouldSetPassword: boolean }> {
      return db.transaction(async (tx) => {
        const found = await check(tx, userId, { token });
        if (found.error) throw found.error;
        return { shouldSetPassword: !found.user.password_hash || found.user.password_temporary === true };
      });
    },

    /** Sends a new activation email to a user who has not activated; answers the same for every email. */
    async resend(email: string, client: Client): Promise<void> {
      const e = email.trim().toLowerCase();
      await limitRequests(deps.limits, client.ip, e);
      const finish = resendTiming.start();
      const sent = await db.transaction(async (tx) => {
        const user = await findByEmail(tx, e);
        if (!user || !(await store.isPending(tx, user.id))) return false;
        await sendActivation(tx, user, user.active_tenant_id);
        return true;
      });
      await finish(sent); // other emails answer after the typical time of a real send
    },

    /** For the vendor: a fresh activation link for a user (not emailed). */
    async generateLink(userId: string): Promise<{ link: string; token: string; userId: string }> {
      return db.transaction(async (tx) => {
        const user = isUuid(userId) ? await findById(tx, userId) : undefined;
        if (!user) throw new AppError('USER_NOT_FOUND', `No user with id ${userId}`);
        const s = await readFlowSettings(tx, 'activation');
        const issued = await codes.issue(tx, {
          purpose: 'activation',
          userId,
          ttlSeconds: s.codeExpiration * 60,
          link: true,
        });
        const link = `${deps.publicUrl}/account/activate?${new URLSearchParams({ userId, token: issued.token! })}`;
        return { link, token: issued.token!, userId };
      });
    },

    activationSettings: (): Promise<StrategySettings> => readFlowSettings(db, 'activation'),
    updateActivationSettings: (patch: Partial<StrategySettings>): Promise<StrategySettings> =>
      db.transaction((tx) => writeFlowSettings(tx, 'activation', patch)),
  };
}
