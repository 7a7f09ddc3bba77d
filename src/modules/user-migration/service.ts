import { Compile } from 'typebox/compile';
import type { EventsService } from '../events/index.ts';
import { AppError } from '../../http/errors.ts';
import type { JobHandler, JobRunner } from '../../jobs/runner.ts';
import { encrypt, newId } from '../../lib/crypto.ts';
import { isUniqueViolation } from '../../lib/pg-errors.ts';
import type { Db, Queryable } from '../../storage/db.ts';
import { createMigrationEngine, describeItemErrors, MAX_MIGRATION_ITEMS, type ChunkItem, type ItemError } from '../account-migration/index.ts';
import { hasherFor, importerFor } from '../credentials/index.ts';
import type { RolesService } from '../roles/index.ts';
import { parseMetadata, type TenantsService } from '../tenants/index.ts';
import { addMembership, addPhone, addRoles, findByEmail, findById, findByPhone, findByUsername, insertUser, type UsersService } from '../users/index.ts';
import type { User } from '../users/index.ts';
import { MigrateUserBody } from './schema.ts';
import * as store from './store.ts';

export const USERS_MIGRATION_JOB = 'migration.users';

export interface UserMigrationDeps {
  db: Db;
  jobs: Pick<JobRunner, 'enqueue' | 'notify'>;
  tenants: TenantsService;
  roles: RolesService;
  users: UsersService;
  /** Key-encryption key: seals imported authenticator-app secrets. */
  kek: Buffer;
  chunkSize: number;
  /** The outbox (issue 10): migration.completed. */
  events?: EventsService;
}

/** A checked migration body, ready to write. */
interface Prepared {
  body: MigrateUserBody;
  email: string;
  passwordHash: string | null;
  metadata: Record<string, unknown>;
  vendorMetadata: Record<string, unknown>;
  providerRoleKeys?: string[];
}

const checkBody = Compile(MigrateUserBody);

function hashConfig(body: MigrateUserBody): Record<string, unknown> | undefined {
  if (body.passwordHashConfig === undefined || body.passwordHashConfig.trim() === '') return undefined;
  let v: unknown;
  try {
    v = JSON.parse(body.passwordHashConfig);
  } catch {
    throw new AppError('HASH_CONFIG_INVALID', 'passwordHashConfig must be a stringified JSON object; it is not valid JSON');
  }
  if (v === null || typeof v !== 'object' || Array.isArray(v)) throw new AppError('HASH_CONFIG_INVALID', 'passwordHashConfig must be a stringified JSON object');
  return v as Record<string, unknown>;
}

/**
 * The stored hash for the body (wire.md section 8), or null when the user must set a password: no hash, or a hash
 * without passwordHashType that does not describe itself (interface rule 3: the user is prompted to reset).
 */
function importedHash(body: MigrateUserBody): string | null {
  if (body.passwordHash === undefined) {
    if (body.passwordHashType !== undefined) throw new AppError('VALIDATION', 'passwordHash is required with passwordHashType');
    return null;
  }
  if (body.passwordHashType === undefined) {
    const self = hasherFor(body.passwordHash);
    return self && (self.id === 'bcrypt' || self.id === 'argon2') && !self.imports!.check(undefined, body.passwordHash) ? body.passwordHash : null;
  }
  const hasher = importerFor(body.passwordHashType)!;
  const spec = hasher.imports!;
  const config = hashConfig(body);
  const missing = spec.required.find((k) => config?.[k] === undefined);
  if (missing) throw new AppError('HASH_CONFIG_INVALID', `passwordHashConfig must hold ${missing} for passwordHashType ${spec.type} (keys: ${spec.required.join(', ')})`);
  const problem = spec.check(config, body.passwordHash);
  if (problem) throw new AppError('HASH_CONFIG_INVALID', `${problem} (passwordHashType ${spec.type})`);
  return spec.store(body.passwordHash, config);
}

const providerRoleKeys = (body: object): string[] | undefined => {
  const v = (body as { providerRoleKeys?: unknown }).providerRoleKeys;
  return Array.isArray(v) ? v.filter((k): k is string => typeof k === 'string').slice(0, 100) : undefined;
};

/** Every rule that needs no database: throws AppError (400) naming the field. */
export function prepare(body: MigrateUserBody): Prepared {
  if (body.phoneNumberType !== undefined && body.phoneNumber === undefined) throw new AppError('VALIDATION', 'phoneNumberType needs phoneNumber');
  return {
    body,
    email: body.email.trim().toLowerCase(),
    passwordHash: importedHash(body),
    metadata: body.metadata !== undefined ? parseMetadata(body.metadata, 'metadata') : {},
    vendorMetadata: body.vendorMetadata !== undefined ? parseMetadata(body.vendorMetadata, 'vendorMetadata') : {},
    ...(providerRoleKeys(body) ? { providerRoleKeys: providerRoleKeys(body) } : {}),
  };
}

export type UserMigrationService = ReturnType<typeof createUserMigrationService>;

/** Migrating users: one (answered with the User), or a bulk request imported by a durable job. */
export function createUserMigrationService(deps: UserMigrationDeps) {
  const { db, roles } = deps;

  /** The users row of a prepared body (the membership, phone, roles and applications are written beside it). */
  function userColumns(p: Prepared, id: string) {
    const { body } = p;
    return {
      id,
      email: p.email,
      username: body.username ?? null,
      name: body.name ?? '',
      profile_picture_url: body.profilePictureUrl ?? null,
      verified: body.verifyUser ?? false,
      provider: body.provider ?? 'local',
      metadata: p.metadata,
      vendor_metadata: p.vendorMetadata,
      password_hash: p.passwordHash,
      must_reset_password: p.passwordHash === null,
      mfa_enrolled: body.authenticatorAppMfaSecret !== undefined,
      authenticator_mfa_secret_enc: body.authenticatorAppMfaSecret ? encrypt(deps.kek, body.authenticatorAppMfaSecret.replace(/=+$/, '').toUpperCase()) : null,
      phone_number_type: body.phoneNumber ? (body.phoneNumberType ?? null) : null,
      active_tenant_id: body.tenantId,
    };
  }

  /** Writes one prepared user in `tx`: account, uniqueness, roles, phone, MFA secret, applications. */
  async function write(tx: Queryable, p: Prepared, appIds: string[]): Promise<string> {
    const { body } = p;
    const account = await deps.tenants.requireLive(tx, body.tenantId);
    if (await findByEmail(tx, p.email)) throw new AppError('USER_EXISTS', `A user with email ${p.email} already exists in the environment`);
    if (body.username && (await findByUsername(tx, body.username))) throw new AppError('USERNAME_TAKEN', `Username ${body.username} is taken`);
    if (body.phoneNumber && (await findByPhone(tx, body.phoneNumber))) throw new AppError('PHONE_TAKEN', `Phone number ${body.phoneNumber} belongs to another user`);
    // Provider migrations carry the provider's role names; those matching a role key in reach are given.
    const providerRoles = Array.isArray(p.providerRoleKeys) ? await store.roleIdsByKeys(tx, body.tenantId, p.providerRoleKeys) : [];
    const roleIds = body.roleIds?.length ? body.roleIds : providerRoles.length ? providerRoles : await roles.defaultRoleIds(tx, body.tenantId);
    if (body.roleIds?.length) await roles.assertAssignable(tx, body.tenantId, body.roleIds);
    const id = newId();
    await insertUser(tx, userColumns(p, id));
    if (body.phoneNumber && !(await addPhone(tx, id, body.phoneNumber))) throw new AppError('PHONE_TAKEN', `Phone number ${body.phoneNumber} belongs to another user`);
    await addMembership(tx, body.tenantId, id, { subAccess: account.sub_account_access_type !== 'defaultOff', expiresAt: null });
    await addRoles(tx, body.tenantId, id, roleIds);
    await store.assignApplications(tx, body.tenantId, id, appIds);
    return id;
  }

  /** Interface rule 6: at least one default or auto-assign application must exist. */
  async function applicationIds(q: Queryable): Promise<string[]> {
    const ids = await store.autoApplicationIds(q);
    if (ids.length === 0) throw new AppError('NO_DEFAULT_APPLICATION', 'Migrated users need a default or auto-assign application; create one first');
    return ids;
  }

  /**
   * One chunk of a bulk job, one item at a time: each user in its own savepoint, so a rejected user (even by a
   * constraint, when a concurrent request took its email or phone) leaves nothing and the others still land. The
   * batched import below falls back to this when a concurrent writer beats it to a unique key.
   */
  async function importOneByOne(tx: Db, items: { c: ChunkItem; p: Prepared }[], appIds: string[], errors: ItemError[]): Promise<number> {
    let succeeded = 0;
    for (const { c, p } of items) {
      await tx.query('SAVEPOINT migrate_user');
      try {
        await write(tx, p, appIds);
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

  /**
   * One chunk of a bulk job, in batches: every item is checked in JS, the database is asked once per kind of check
   * (live accounts, emails, usernames, phones, roles) for the whole chunk, the items are then decided in order exactly
   * as `write` would decide them one after another (an earlier accepted item claims its email, username and phone),
   * and the accepted users are written with one multi-row INSERT per table. Every rejected item is one error entry
   * with the code and message `write` gives.
   */
  async function importChunk(tx: Db, items: ChunkItem[]): Promise<{ succeeded: number; errors: ItemError[] }> {
    const errors: ItemError[] = [];
    const appIds = await applicationIds(tx);
    const reject = (c: ChunkItem, err: AppError) => errors.push({ index: c.index, key: c.key, code: err.code, message: err.message });

    // 1. What needs no database.
    const checked: { c: ChunkItem; p: Prepared }[] = [];
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

    // 2. One query per kind of check, over the whole chunk.
    const distinct = <T>(xs: (T | undefined)[]) => [...new Set(xs.filter((x): x is T => x !== undefined))];
    const accounts = await store.liveAccounts(tx, distinct(checked.map(({ p }) => p.body.tenantId)));
    const emails = await store.takenEmails(tx, distinct(checked.map(({ p }) => p.email)));
    const names = await store.usernames(tx, distinct(checked.map(({ p }) => p.body.username)));
    const phones = await store.takenPhones(tx, distinct(checked.map(({ p }) => p.body.phoneNumber)));
    const defaults = await store.defaultRoleIdsOf(tx, [...accounts.keys()]);
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
    const accepted: { c: ChunkItem; p: Prepared }[] = [];
    const rows: store.NewMigratedUser[] = [];
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
      if (name) name.taken = true;
      // Every other spelling of the same username (lower() equal) is taken now too.
      if (name) for (const other of names.values()) if (other.lower === name.lower) other.taken = true;
      if (body.phoneNumber) phones.add(body.phoneNumber);
      accepted.push(entry);
      rows.push({ ...userColumns(p, newId()), sub_access: account.subAccess, phone: body.phoneNumber ?? null, role_ids: roleIds });
    }

    // 4. One INSERT per table. A unique violation here means a concurrent writer took a key after the checks: the
    // accepted users then go one by one (each in a savepoint), which gives each its own outcome.
    if (rows.length === 0) return { succeeded: 0, errors };
    await tx.query('SAVEPOINT migrate_chunk');
    try {
      await store.insertMigratedUsers(tx, rows, appIds);
      await tx.query('RELEASE SAVEPOINT migrate_chunk');
      return { succeeded: rows.length, errors };
    } catch (err) {
      if (!isUniqueViolation(err)) throw err;
      await tx.query('ROLLBACK TO SAVEPOINT migrate_chunk');
      return { succeeded: await importOneByOne(tx, accepted, appIds, errors), errors };
    }
  }

  const engine = createMigrationEngine(deps, {
    kind: 'users',
    jobKind: USERS_MIGRATION_JOB,
    field: 'users',
    keyField: 'email',
    errorKey: 'email',
    maxItems: MAX_MIGRATION_ITEMS,
    label: 'user migration',
    process: importChunk,
  });

  return {
    /** POST .../local: one user, answered with the User record. */
    async migrateOne(body: MigrateUserBody): Promise<User> {
      const p = prepare(body);
      const id = await db.transaction(async (tx) => write(tx, p, await applicationIds(tx)));
      return deps.users.get(id, body.tenantId);
    },

    /** POST .../local/bulk: stored with its job at once; the job imports the users. */
    startBulk: (users: unknown[]) => engine.submit(users),

    async status(migrationId: string) {
      const s = await engine.status(migrationId);
      const failure = s.state === 'failed' ? await store.migrationFailure(db, migrationId) : null;
      return failure ? { ...s, failureReason: failure } : s;
    },

    /**
     * A provider migration: the row (no items yet) and its fetch job in one transaction. The job fills the items and
     * hands the row to the bulk job; the provider's secret rides in the job sealed with the key-encryption key.
     */
    async startFromProvider(provider: string, fetchJobKind: string, params: Record<string, unknown> & { secret: string }) {
      const migrationId = newId();
      await db.transaction(async (tx) => {
        await store.insertEmptyUsersMigration(tx, migrationId);
        await deps.jobs.enqueue(tx, { kind: fetchJobKind, payload: { migrationId, provider, ...params, secret: encrypt(deps.kek, params.secret) }, maxAttempts: 1 });
      });
      deps.jobs.notify();
      return { migrationId };
    },

    /** For the fetch job: the fetched items become the migration's items, and the bulk job is queued. */
    async fillAndImport(migrationId: string, items: unknown[]): Promise<void> {
      await db.transaction(async (tx) => {
        await store.fillMigration(tx, migrationId, items);
        await deps.jobs.enqueue(tx, { kind: USERS_MIGRATION_JOB, payload: { migrationId } });
      });
      deps.jobs.notify();
    },

    failMigration: (q: Queryable, migrationId: string, reason: string) => store.failMigration(q, migrationId, reason),
    jobHandler: engine.handler as JobHandler,
    findUser: (q: Queryable, id: string) => findById(q, id),
  };
}
