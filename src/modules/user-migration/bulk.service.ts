import type { EventsService } from '../events/index.ts';
import { AppError } from '../../http/errors.ts';
import { newId } from '../../lib/crypto.ts';
import { isUniqueViolation } from '../../lib/pg-errors.ts';
import type { Db, Queryable } from '../../storage/db.ts';
import { describeItemErrors, type ChunkItem, type ItemError } from '../account-migration/index.ts';
import type { RolesService } from '../roles/index.ts';
import * as bulkStore from './bulk.store.ts';
import { checkBody, createdEvent, prepare, userColumns, type Prepared } from './prepare.ts';
import * as store from './store.ts';

export interface BulkImportDeps {
  roles: RolesService;
  kek: Buffer;
  events?: EventsService;
  /** Writes one prepared user as the single migration does (its checks, rows and event); throws AppError. */
  write: (tx: Queryable, p: Prepared, appIds: string[]) => Promise<string>;
}

type Entry = { c: ChunkItem; p: Prepared };

export const noApplication = () => new AppError('NO_DEFAULT_APPLICATION', 'Migrated users need a default or auto-assign application; create one first');

/**
 * The chunk processor of the bulk job (the account-migration engine calls it inside the chunk's transaction).
 *
 * In batches: every item is checked in JS, the database is asked once for everything the checks need (live accounts,
 * emails, usernames, phones, default roles, applications), the items are then decided in order exactly as `write`
 * would decide them one after another (an earlier accepted item claims its email, username and phone), and the
 * accepted users are written by one statement, their `user.created` events by one more. Every rejected item is one
 * error entry with the code and message `write` gives.
 */
export function createBulkImport(deps: BulkImportDeps) {
  const { roles } = deps;

  /**
   * Fallback, one item at a time: each user in its own savepoint, so a rejected user (even by a constraint, when a
   * concurrent request took its email or phone) leaves nothing and the others still land.
   */
  async function importOneByOne(tx: Db, items: Entry[], appIds: string[], errors: ItemError[]): Promise<number> {
    let succeeded = 0;
    for (const { c, p } of items) {
      await tx.query('SAVEPOINT migrate_user');
      try {
        await deps.write(tx, p, appIds);
        await tx.query('RELEASE SAVEPOINT migrate_user');
        succeeded++;
      } catch (err) {
        const known = err instanceof AppError ? err : isUniqueViolation(err) ? new AppError('USER_EXISTS', `A user with this email, username or phone number already exists (${(err as Error).message})`) : undefined;
        if (!known) throw err; // the chunk rolls back and the job retries it
        await tx.query('ROLLBACK TO SAVEPOINT migrate_user');
        errors.push({ index: c.index, key: c.key, code: known.code, message: known.message });
      }
    }
    return succeeded;
  }

  return async function importChunk(tx: Db, items: ChunkItem[]): Promise<{ succeeded: number; errors: ItemError[] }> {
    const errors: ItemError[] = [];
    const reject = (c: ChunkItem, err: AppError) => errors.push({ index: c.index, key: c.key, code: err.code, message: err.message });

    // 1. What needs no database.
    const checked: Entry[] = [];
    for (const c of items) {
      if (!checkBody.Check(c.item)) {
        errors.push({ index: c.index, key: c.key, code: 'VALIDATION', message: describeItemErrors(checkBody.Errors(c.item)) });
        continue;
      }
      try {
        checked.push({ c, p: prepare(c.item) });
      } catch (err) {
        if (!(err instanceof AppError)) throw err;
        reject(c, err);
      }
    }

    // 2. One statement for every check, over the whole chunk.
    const distinct = <T>(xs: (T | undefined)[]) => [...new Set(xs.filter((x): x is T => x !== undefined))];
    const facts = await bulkStore.chunkFacts(tx, {
      tenantIds: distinct(checked.map(({ p }) => p.body.tenantId)),
      emails: distinct(checked.map(({ p }) => p.email)),
      usernames: distinct(checked.map(({ p }) => p.body.username)),
      phones: distinct(checked.map(({ p }) => p.body.phoneNumber)),
    });
    // Interface rule 6: at least one default or auto-assign application (else the chunk fails and the job retries).
    if (facts.appIds.length === 0) throw noApplication();
    const { accounts, emails, usernames: names, phones, defaults, appIds } = facts;
    // Role checks that need the database (explicit roleIds, provider role names), once per distinct list.
    const cached = new Map<string, Promise<string[] | AppError>>();
    const once = (key: string, f: () => Promise<string[]>) => {
      let v = cached.get(key);
      if (!v) {
        v = f().catch((err) => {
          if (err instanceof AppError) return err;
          throw err;
        });
        cached.set(key, v);
      }
      return v;
    };

    // 3. In order, as write() would decide one item after another.
    const accepted: Entry[] = [];
    const rows: bulkStore.NewMigratedUser[] = [];
    for (const entry of checked) {
      const { c, p } = entry;
      const { body } = p;
      const account = accounts.get(body.tenantId);
      if (!account) {
        reject(c, new AppError('ACCOUNT_NOT_FOUND', `No account with tenantId ${body.tenantId}`));
        continue;
      }
      if (emails.has(p.email)) {
        reject(c, new AppError('USER_EXISTS', `A user with email ${p.email} already exists in the environment`));
        continue;
      }
      const name = body.username ? names.get(body.username) : undefined;
      if (body.username && name?.taken) {
        reject(c, new AppError('USERNAME_TAKEN', `Username ${body.username} is taken`));
        continue;
      }
      if (body.phoneNumber && phones.has(body.phoneNumber)) {
        reject(c, new AppError('PHONE_TAKEN', `Phone number ${body.phoneNumber} belongs to another user`));
        continue;
      }
      const providerRoles = Array.isArray(p.providerRoleKeys)
        ? await once(`p\0${body.tenantId}\0${JSON.stringify(p.providerRoleKeys)}`, () => store.roleIdsByKeys(tx, body.tenantId, p.providerRoleKeys!))
        : [];
      if (providerRoles instanceof AppError) throw providerRoles; // roleIdsByKeys throws no AppError
      let roleIds: string[];
      if (body.roleIds?.length) {
        const ok = await once(`a\0${body.tenantId}\0${JSON.stringify(body.roleIds)}`, async () => {
          await roles.assertAssignable(tx, body.tenantId, body.roleIds!);
          return body.roleIds!;
        });
        if (ok instanceof AppError) {
          reject(c, ok);
          continue;
        }
        roleIds = ok;
      } else if (providerRoles.length) {
        roleIds = providerRoles;
      } else {
        roleIds = defaults.get(body.tenantId)!;
      }
      emails.add(p.email);
      // Every spelling of the same username (lower() equal) is taken now.
      if (name) for (const other of names.values()) if (other.lower === name.lower) other.taken = true;
      if (body.phoneNumber) phones.add(body.phoneNumber);
      accepted.push(entry);
      rows.push({ ...userColumns(p, newId(), deps.kek), sub_access: account.subAccess, phone: body.phoneNumber ?? null, role_ids: roleIds });
    }

    // 4. One statement for the users, one for their events. A unique violation means a concurrent writer took a key
    // after the checks: the accepted users then go one by one (each in a savepoint), which gives each its own outcome.
    if (rows.length === 0) return { succeeded: 0, errors };
    await tx.query('SAVEPOINT migrate_chunk');
    try {
      await bulkStore.insertMigratedUsers(tx, rows, appIds);
    } catch (err) {
      if (!isUniqueViolation(err)) throw err;
      await tx.query('ROLLBACK TO SAVEPOINT migrate_chunk');
      return { succeeded: await importOneByOne(tx, accepted, appIds, errors), errors };
    }
    await tx.query('RELEASE SAVEPOINT migrate_chunk');
    await deps.events?.emitMany(tx, rows.map((u) => createdEvent(u.id, u.email, u.active_tenant_id)));
    return { succeeded: rows.length, errors };
  };
}
