import type { Queryable } from '../../storage/db.ts';
import * as store from './phones.store.ts';
import type { PhoneNumberFilter, PhoneNumberRow } from './phones.store.ts';

// The user's phone numbers as rows, for other modules' flows in their own transaction (SQL in phones.store.ts): the
// phone routes (recovery) and the passwordless SMS code.

export type { PhoneNumberFilter, PhoneNumberRow };

/** A page of numbers (and the total) matching the filter. */
export const listPhoneNumbers = (q: Queryable, f: PhoneNumberFilter) => store.list(q, f);
/** The user's numbers, the primary one first. */
export const phoneNumbersOf = (q: Queryable, userId: string) => store.ofUser(q, userId);
/** The row holding the number; `lock` takes it for update. */
export const phoneNumberByValue = (q: Queryable, phone: string, lock = false) => store.byNumber(q, phone, lock);
/** The row by id; `lock` takes it for update. */
export const phoneNumberById = (q: Queryable, id: string, lock = false) => store.byId(q, id, lock);
/** Adds a number (the user's first one becomes primary); undefined when another user holds it. */
export const addPhoneNumber = (q: Queryable, userId: string, phone: string, verified: boolean) =>
  store.insert(q, userId, phone, verified);
export const markPhoneNumberVerified = (q: Queryable, id: string) => store.markVerified(q, id);
/** Removes a number; the user's oldest remaining one becomes primary when it was the primary one. */
export const removePhoneNumber = (q: Queryable, row: PhoneNumberRow) => store.remove(q, row);
/** The user's primary number (else the oldest); undefined when none. */
export const primaryPhoneOf = (q: Queryable, userId: string) => store.primaryPhone(q, userId);
