import { AppError } from '../../http/errors.ts';
import type { Queryable } from '../../storage/db.ts';
import { parseMetadata } from '../tenants/index.ts';
import type { groupsOfUsers } from '../groups/index.ts';
import type { UpdateProfile, UpdateUser, User } from './schema.ts';
import type { UsersDeps } from './service.ts';
import * as phoneStore from './phones.store.ts';
import * as store from './store.ts';

/** What the users service lends its parts (profile.service.ts, email.service.ts): lookups that 404 and the record builder. */
export interface UsersCore {
  requireUser: (q: Queryable, userId: string, lock?: boolean) => Promise<store.UserRow>;
  requireMembership: (q: Queryable, tenantId: string, userId: string) => Promise<store.UserRow>;
  record: (
    q: Queryable,
    user: store.UserRow,
    tenantId?: string,
    known?: { groups?: Awaited<ReturnType<typeof groupsOfUsers>> },
  ) => Promise<User>;
}

/**
 * Fields an environment token may change (the global update, or the email route) that a user may not change of their
 * own profile: sent to a profile route they are a 400 naming them, never silently dropped (the caller would believe
 * the change was made). Other unknown fields are ignored, as everywhere.
 */
export const NOT_SELF_SERVICE = ['vendorMetadata', 'mfaBypass', 'externalId', 'email'] as const;

/**
 * Fields of POST /users/v1 that only an environment token may set: an account admin (user token) creating a user may
 * not set what it may not change afterwards (the global update and POST /users/v1/{userId}/verify are environment
 * routes). Sent with a user token they are a 400 naming them, as NOT_SELF_SERVICE.
 */
export const VENDOR_ONLY_CREATE = ['vendorMetadata', 'mfaBypass', 'externalId', 'verified'] as const;

/** The fields of the profile routes (PUT /users/v1, PUT /users/v2/me), copied one by one: nothing else reaches the update. */
const profileFields = (b: UpdateProfile): UpdateProfile => ({
  name: b.name,
  profilePictureUrl: b.profilePictureUrl,
  metadata: b.metadata,
  phoneNumber: b.phoneNumber,
});

/** Column values of an update body; a metadata field that is not a JSON object is a 400 before anything is written. */
function columnsOf(body: UpdateUser): Record<string, unknown> {
  const values: Record<string, unknown> = {};
  if (body.name !== undefined) values.name = body.name;
  if (body.profilePictureUrl !== undefined) values.profile_picture_url = body.profilePictureUrl;
  if (body.mfaBypass !== undefined) values.mfa_bypass = body.mfaBypass;
  if (body.externalId !== undefined) values.external_id = body.externalId;
  if (body.metadata !== undefined) values.metadata = parseMetadata(body.metadata, 'metadata');
  if (body.vendorMetadata !== undefined) values.vendor_metadata = parseMetadata(body.vendorMetadata, 'vendorMetadata');
  return values;
}

/** Updates of a user's profile: the global one (environment token) and the user's own (a subset of its fields). */
export function createProfileOps(deps: UsersDeps, core: UsersCore) {
  const { db } = deps;

  /** In `tx`, with the user locked: the columns, an added phone number (409 when another user holds it), user.updated. */
  async function apply(tx: Queryable, before: store.UserRow, body: UpdateUser): Promise<void> {
    const values = columnsOf(body);
    await store.updateUser(tx, before.id, values);
    if (body.phoneNumber && !(await phoneStore.addPhone(tx, before.id, body.phoneNumber))) {
      throw new AppError('PHONE_TAKEN', `Phone number ${body.phoneNumber} belongs to another user`);
    }
    const changed = Object.keys(body).filter((k) => (body as Record<string, unknown>)[k] !== undefined);
    await deps.events?.emit(tx, {
      eventKey: 'user.updated',
      tenantId: before.active_tenant_id,
      entity: { type: 'user', id: before.id },
      data: { userId: before.id, email: before.email, changed },
    });
  }

  return {
    /** Global partial update; phone numbers are added (existing ones kept), metadata fields must be JSON objects. */
    async update(userId: string, body: UpdateUser): Promise<User> {
      columnsOf(body); // input errors before the transaction
      return db.transaction(async (tx) => {
        const before = await core.requireUser(tx, userId, true);
        await apply(tx, before, body);
        return core.record(tx, (await store.findById(tx, userId))!);
      });
    },

    /**
     * A user changes their own profile (name, picture, metadata, an added phone number) under the rules of the global
     * update, as a member of `tenantId` (the record answered is that account's). A field of NOT_SELF_SERVICE is a 400.
     */
    async updateProfile(userId: string, tenantId: string, body: UpdateProfile): Promise<User> {
      const refused = NOT_SELF_SERVICE.filter((k) => (body as Record<string, unknown>)[k] !== undefined);
      if (refused.length > 0) {
        throw new AppError(
          'VALIDATION',
          `${refused.map((k) => `body.${k}`).join(', ')}: a user cannot change ${refused.join(', ')} of their own profile (an environment token changes them with PUT /identity/resources/users/v1/{userId} or PUT /identity/resources/users/v1/{userId}/email)`,
          { fields: refused },
        );
      }
      const own = profileFields(body);
      columnsOf(own);
      return db.transaction(async (tx) => {
        const before = await core.requireUser(tx, userId, true);
        await core.requireMembership(tx, tenantId, userId);
        await apply(tx, before, own);
        return core.record(tx, (await store.findById(tx, userId))!, tenantId);
      });
    },
  };
}
