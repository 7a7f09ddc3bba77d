import { AppError } from '../../http/errors.ts';
import type { Queryable } from '../../storage/db.ts';
import type { UserEmailsPolicy, UserEmailsPolicyBody } from './schema.ts';
import * as store from './store.ts';

/** Without a stored policy users may change their own email (the self-service flow proves the new address first). */
export const DEFAULT_ALLOW_EMAIL_CHANGE = true;

/**
 * The user emails policy (environment level): whether users may change their own email address. Read where the
 * self-service change is asked for and confirmed (recovery module); the vendor's change of a user's email is not
 * subject to it. Not a hot path: read on demand, not cached.
 */
export async function getUserEmailsPolicy(q: Queryable): Promise<UserEmailsPolicy> {
  return { allowEmailChange: (await store.userEmailsPolicy(q))?.allow_email_change ?? DEFAULT_ALLOW_EMAIL_CHANGE };
}

export async function setUserEmailsPolicy(q: Queryable, body: UserEmailsPolicyBody): Promise<UserEmailsPolicy> {
  if (body.allowEmailChange === undefined) throw new AppError('EMPTY_UPDATE', 'The body must set allowEmailChange');
  return { allowEmailChange: (await store.upsertUserEmailsPolicy(q, body.allowEmailChange)).allow_email_change };
}

/** Throws EMAIL_CHANGE_NOT_ALLOWED (403) when the policy forbids users to change their own email. */
export async function assertEmailChangeAllowed(q: Queryable): Promise<void> {
  if (!(await getUserEmailsPolicy(q)).allowEmailChange) {
    throw new AppError(
      'EMAIL_CHANGE_NOT_ALLOWED',
      'Users may not change their own email address in this environment (user emails policy allowEmailChange is false); ask an administrator',
    );
  }
}
