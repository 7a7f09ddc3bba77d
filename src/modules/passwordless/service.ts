import { isUuid } from '../../lib/pg-errors.ts';
import { AppError } from '../../http/errors.ts';
import type { Db, Queryable } from '../../storage/db.ts';
import type { LoginService } from '../auth/index.ts';
import type { PasswordService } from '../credentials/index.ts';
import {
  findByEmail,
  findById,
  findByPhone,
  findByUsername,
  isLockedNow,
  primaryPhoneOf,
  updateUser,
  type UserRow,
} from '../users/index.ts';
import { checkError, type CodeBook } from './codes.ts';
import { countFailure, limitRequests, maskPhone, type Client, type CodeLimits, type Delivery } from './kit.ts';
import { createEqualizer } from './timing.ts';
import { readFlowSettings, writeFlowSettings, type PasswordlessSettings } from './settings.ts';

export type PasswordlessType = 'magiclink' | 'code' | 'smscode';
const METHOD = { magiclink: 'MagicLink', code: 'Code', smscode: 'SmsCode' } as const;
/** Authentication methods (RFC 8176) a passwordless sign-in puts into `amr`. */
const AMR: Record<PasswordlessType, string[]> = {
  magiclink: ['email'],
  code: ['otp', 'email'],
  smscode: ['otp', 'sms'],
};

export interface PreloginBody {
  email?: string;
  username?: string;
  userId?: string;
  phoneNumber?: string;
}
export interface PostloginBody extends PreloginBody {
  token: string;
  /** An account invite token: after the code or link is checked the user joins that account and signs in to it. */
  invitationToken?: string;
}

export interface PasswordlessDeps {
  db: Db;
  passwords: PasswordService;
  login: LoginService;
  codes: CodeBook;
  delivery: Delivery;
  limits: CodeLimits;
  /** Account invite tokens (invitations module): joins the user to the token's account, answers its id. */
  inviteTokens?: { join(q: Queryable, user: UserRow, token: string): Promise<string> };
}

export type PasswordlessService = ReturnType<typeof createPasswordlessService>;

/**
 * Passwordless sign-in: a magic link or a one-time code by email, or a code by SMS. The pre-login answers the same
 * whether or not the identifier belongs to a user (and sends nothing when it does not); the post-login checks the
 * link or code (single use, expiring, compared in constant time; wrong codes count toward lockout) and signs in.
 */
export function createPasswordlessService(deps: PasswordlessDeps) {
  const { db, codes } = deps;
  const timing = { magiclink: createEqualizer(), code: createEqualizer(), smscode: createEqualizer() };

  function identifierOf(
    type: PasswordlessType,
    b: PreloginBody,
  ): { kind: 'email' | 'username' | 'userId' | 'phone'; value: string } {
    if (type === 'smscode' && b.phoneNumber?.trim()) return { kind: 'phone', value: b.phoneNumber.trim() };
    if (b.email?.trim()) return { kind: 'email', value: b.email.trim().toLowerCase() };
    if (b.username?.trim()) return { kind: 'username', value: b.username.trim().toLowerCase() };
    if (b.userId?.trim()) return { kind: 'userId', value: b.userId.trim() };
    throw new AppError(
      'VALIDATION',
      type === 'smscode' ? 'body.phoneNumber or body.email is required' : 'body.email is required',
    );
  }

  async function findUser(q: Queryable, id: ReturnType<typeof identifierOf>): Promise<UserRow | undefined> {
    switch (id.kind) {
      case 'email':
        return findByEmail(q, id.value);
      case 'username':
        return findByUsername(q, id.value);
      case 'userId':
        return isUuid(id.value) ? findById(q, id.value) : undefined;
      case 'phone':
        return findByPhone(q, id.value);
    }
  }

  /** The number an SMS code goes to: the given one, else the user's primary; not a number registered for MFA only. */
  async function smsNumber(q: Queryable, user: UserRow, given?: string): Promise<string | undefined> {
    if (user.phone_number_type === 'mfa') return undefined;
    const primary = await primaryPhoneOf(q, user.id);
    return given ?? primary;
  }

  async function requireActive(type: PasswordlessType): Promise<number> {
    const s = await readFlowSettings(db, 'passwordless');
    const m = s[METHOD[type]];
    if (!m.active)
      throw new AppError(
        'PASSWORDLESS_DISABLED',
        `Passwordless sign-in by ${METHOD[type]} is not enabled (POST /identity/resources/configurations/v1/auth/strategies)`,
      );
    return m.expiresInMinutes;
  }

  return {
    async settings(): Promise<PasswordlessSettings> {
      return readFlowSettings(db, 'passwordless');
    },
    async updateSettings(patch: Partial<PasswordlessSettings>): Promise<PasswordlessSettings> {
      return db.transaction((tx) => writeFlowSettings(tx, 'passwordless', patch as Record<string, unknown>));
    },

    /** Sends a link or code when the identifier names a user who may use it; answers the same either way. */
    async prelogin(type: PasswordlessType, body: PreloginBody, client: Client): Promise<Record<string, string>> {
      const minutes = await requireActive(type);
      const id = identifierOf(type, body);
      await limitRequests(deps.limits, client.ip, id.value);
      const finish = timing[type].start();
      const sent = await db.transaction(async (tx) => {
        const user = await findUser(tx, id);
        if (!user || isLockedNow(user)) return false;
        // A user without an email (signed up with a username) gets no link or code by email: the same answer.
        if (type !== 'smscode' && !user.email) return false;
        const ttlSeconds = minutes * 60;
        const vars = { name: user.name, email: user.email ?? '', expiresInMinutes: String(minutes) };
        if (type === 'smscode') {
          const to = await smsNumber(tx, user, id.kind === 'phone' ? id.value : undefined);
          if (!to) return false;
          const issued = await codes.issue(tx, { purpose: 'smscode', userId: user.id, ttlSeconds, code: true });
          await deps.delivery.sendSms(tx, {
            type: 'OTC',
            to,
            tenantId: user.active_tenant_id,
            vars: { ...vars, code: issued.code! },
          });
        } else if (type === 'code') {
          const issued = await codes.issue(tx, { purpose: 'code', userId: user.id, ttlSeconds, code: true });
          await deps.delivery.sendEmail(tx, {
            type: 'OTC',
            to: user.email,
            tenantId: user.active_tenant_id,
            vars: { ...vars, code: issued.code! },
          });
        } else {
          const issued = await codes.issue(tx, { purpose: 'magiclink', userId: user.id, ttlSeconds, link: true });
          await deps.delivery.sendEmail(tx, {
            type: 'MagicLink',
            to: user.email,
            tenantId: user.active_tenant_id,
            vars,
            linkParams: { token: issued.token! },
          });
        }
        return true;
      });
      // Unknown (or locked, or phoneless) identifiers are answered after the typical time of a real send.
      await finish(sent);
      return type === 'smscode' && id.kind === 'phone' ? { phoneNumber: maskPhone(id.value) } : {};
    },

    /**
     * Checks the link token (magic link) or the code of the identified user and signs in. Outcomes that change state
     * (a wrong code counted, a row burned, a lock) commit before the error is answered.
     */
    async postlogin(type: PasswordlessType, body: PostloginBody, client: Client) {
      await requireActive(type);
      const outcome = await db.transaction(async (tx) => {
        let user: UserRow | undefined;
        let rowId: string;
        if (type === 'magiclink') {
          const r = await codes.checkToken(tx, ['magiclink'], body.token);
          if (!r.ok) return { error: checkError(r, 'sign-in link') };
          user = await findById(tx, r.row.user_id, true);
          rowId = r.row.id;
        } else {
          const id = identifierOf(type, body);
          user = await findUser(tx, id);
          if (!user) return { error: new AppError('CODE_INVALID', 'The code is invalid') };
          if (isLockedNow(user))
            return {
              error: new AppError(
                'USER_LOCKED',
                'The user is locked; ask an administrator to unlock it or wait for the lock to expire',
              ),
            };
          const r = await codes.checkCode(tx, type, user.id, body.token.trim());
          if (!r.ok) {
            await countFailure(tx, deps.passwords, user);
            return { error: checkError(r, 'code') };
          }
          rowId = r.row.id;
        }
        if (!user) return { error: new AppError('CODE_INVALID', 'The sign-in link is invalid') };
        if (isLockedNow(user))
          return {
            error: new AppError(
              'USER_LOCKED',
              'The user is locked; ask an administrator to unlock it or wait for the lock to expire',
            ),
          };
        await codes.consume(tx, rowId);
        // An email link or code proves the mailbox.
        if (type !== 'smscode' && !user.verified) {
          await updateUser(tx, user.id, { verified: true });
          user = { ...user, verified: true };
        }
        try {
          const tenantId =
            body.invitationToken && deps.inviteTokens
              ? await deps.inviteTokens.join(tx, user, body.invitationToken)
              : undefined;
          return { response: await deps.login.signIn(tx, user, client, AMR[type], tenantId ? { tenantId } : {}) };
        } catch (err) {
          // Refused by a gate (e.g. not activated): the secret stays consumed, nothing else changes.
          if (err instanceof AppError) return { error: err };
          throw err;
        }
      });
      if ('error' in outcome) throw outcome.error;
      return outcome.response;
    },
  };
}
