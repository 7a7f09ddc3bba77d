import type { EventsService } from '../events/index.ts';
import type { JobHandler, JobRunner } from '../../jobs/runner.ts';
import { encrypt, newId } from '../../lib/crypto.ts';
import type { Db, Queryable } from '../../storage/db.ts';
import {
  createMigrationEngine,
  failMigration,
  fillMigration,
  insertEmptyMigration,
  MAX_MIGRATION_ITEMS,
  migrationFailure,
} from '../account-migration/index.ts';
import type { RolesService } from '../roles/index.ts';
import type { TenantsService } from '../tenants/index.ts';
import { createUserCreation, findById, type UsersService } from '../users/index.ts';
import type { User } from '../users/index.ts';
import { createBulkImport, noApplication, type Once } from './bulk.service.ts';
import { newUserOf, prepare, type Prepared } from './prepare.ts';
import type { MigrateUserBody } from './schema.ts';
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
  /** Users per transaction of a bulk job; undefined: `defaultChunkSize` of the store. */
  chunkSize?: number;
  /** The outbox: user.created per migrated user, migration.completed. */
  events?: EventsService;
}

export type UserMigrationService = ReturnType<typeof createUserMigrationService>;

/**
 * Users per transaction of a bulk job when none is configured (USER_MIGRATION_CHUNK_SIZE, JOB_CHUNK_SIZE). On
 * PostgreSQL a chunk blocks no request (each has its own session) and per-chunk round trips are most of the cost beyond
 * the raw inserts, so a whole 1,000-user request is one chunk. Embedded PGlite has one session: a chunk delays every
 * request until it commits (the 200 ms accept target), so chunks are 100 users there (about 20 ms each).
 */
export const defaultChunkSize = (db: Db): number => ((db as { kind?: string }).kind === 'postgres' ? 1000 : 100);

/** Migrating users: one (answered with the User), or a bulk request imported by a durable job. */
export function createUserMigrationService(deps: UserMigrationDeps) {
  const { db, roles } = deps;

  const creation = createUserCreation({ roles, events: deps.events });

  /**
   * The roles a migrated user gets: the given roleIds (in the account's reach), else the provider's role names that
   * match a role key in reach, else (undefined) the account's defaults. `once` caches a query per distinct list.
   */
  function rolesFor(tx: Queryable, p: Prepared, once: Once = (_k, f) => f()) {
    const { body } = p;
    return async (): Promise<string[] | undefined> => {
      const keys = p.providerRoleKeys;
      const byKeys = () => roles.idsByKeys(tx, body.tenantId, keys!);
      const providerRoles = keys ? await once(`p\0${body.tenantId}\0${JSON.stringify(keys)}`, byKeys) : [];
      const ids = body.roleIds;
      if (ids?.length) {
        return once(`a\0${body.tenantId}\0${JSON.stringify(ids)}`, async () => {
          await roles.assertAssignable(tx, body.tenantId, ids);
          return ids;
        });
      }
      return providerRoles.length ? providerRoles : undefined;
    };
  }

  /** Writes one prepared user in `tx` (the users module's creation), then its applications. */
  async function write(tx: Queryable, p: Prepared, appIds: string[]): Promise<string> {
    const user = await creation.create(tx, newUserOf(p, deps.kek, rolesFor(tx, p)));
    await store.assignApplications(tx, p.body.tenantId, user.id, appIds);
    return user.id;
  }

  /** Interface rule 6: at least one default or auto-assign application must exist. */
  async function applicationIds(q: Queryable): Promise<string[]> {
    const ids = await store.autoApplicationIds(q);
    if (ids.length === 0) throw noApplication();
    return ids;
  }

  const importChunk = createBulkImport({ kek: deps.kek, creation, rolesFor, write });

  const chunkSize = deps.chunkSize ?? defaultChunkSize(db);
  const engine = createMigrationEngine(
    { ...deps, chunkSize },
    {
      kind: 'users',
      jobKind: USERS_MIGRATION_JOB,
      field: 'users',
      keyField: 'email',
      errorKey: 'email',
      maxItems: MAX_MIGRATION_ITEMS,
      label: 'user migration',
      process: importChunk,
    },
  );

  return {
    /** Users per transaction of a bulk job. */
    chunkSize,

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
      const failure = s.state === 'failed' ? await migrationFailure(db, migrationId) : null;
      return failure ? { ...s, failureReason: failure } : s;
    },

    /**
     * A provider migration: the row (no items yet) and its fetch job in one transaction. The job fills the items and
     * hands the row to the bulk job; the provider's secret rides in the job sealed with the key-encryption key.
     */
    async startFromProvider(
      provider: string,
      fetchJobKind: string,
      params: Record<string, unknown> & { secret: string },
    ) {
      const migrationId = newId();
      await db.transaction(async (tx) => {
        await insertEmptyMigration(tx, migrationId, 'users');
        await deps.jobs.enqueue(tx, {
          kind: fetchJobKind,
          payload: { migrationId, provider, ...params, secret: encrypt(deps.kek, params.secret) },
          maxAttempts: 1,
        });
      });
      deps.jobs.notify();
      return { migrationId };
    },

    /** For the fetch job: the fetched items become the migration's items, and the bulk job is queued. */
    async fillAndImport(migrationId: string, items: unknown[]): Promise<void> {
      await db.transaction(async (tx) => {
        await fillMigration(tx, migrationId, 'users', items);
        await deps.jobs.enqueue(tx, { kind: USERS_MIGRATION_JOB, payload: { migrationId } });
      });
      deps.jobs.notify();
    },

    failMigration: (q: Queryable, migrationId: string, reason: string) => failMigration(q, migrationId, reason),
    jobHandler: engine.handler as JobHandler,
    findUser: (q: Queryable, id: string) => findById(q, id),
  };
}
