import type { Logger } from 'pino';
import { createLogger as createBaseLogger } from './lib/log.ts';
import type { Config } from './config.ts';
import { createJobRunner } from './jobs/runner.ts';
import type { AuthContext, Authenticate } from './http/auth.ts';
import { AppError } from './http/errors.ts';
import type { Db } from './storage/db.ts';
import { createEnvironmentService } from './modules/environment/index.ts';
import { createKeysService, loadKeyEncryptionKey } from './modules/keys/index.ts';
import { createTenantsService } from './modules/tenants/index.ts';
import { createHierarchyService } from './modules/hierarchy/index.ts';
import { createAccountSettingsService } from './modules/account-settings/index.ts';
import { createPasswordService } from './modules/credentials/index.ts';
import { accountMigrationJobs, createAccountMigrationService } from './modules/account-migration/index.ts';
import { createRolesService } from './modules/roles/index.ts';
import { createUsersService, removeAccountUsers } from './modules/users/index.ts';
import { createAuth } from './modules/auth/index.ts';
import { readFileSync } from 'node:fs';
import { createApplicationsService, createUserMigrationService, userMigrationJobs } from './modules/user-migration/index.ts';
import { createEntitlementsService } from './modules/entitlements/index.ts';
import { createEventsService } from './modules/events/index.ts';

export { LOG_REDACT } from './lib/log.ts';

export function createLogger(config: Config): Logger {
  return createBaseLogger(config.logLevel);
}

/**
 * The composition root shared by the server and the tests: every service built over one Db, with explicit deps.
 * Nothing here listens on a port; `server.ts` does that.
 */
export async function createContext(config: Config, db: Db, log: Logger) {
  // One key-encryption key seals signing keys, migrated MFA secrets and provider secrets.
  const kek = loadKeyEncryptionKey(config.encryptionKey, config.dataDir);
  const keys = createKeysService({
    db,
    kek,
    algorithm: config.jwtAlgorithm,
    issuer: config.publicUrl,
    graceSeconds: Math.max(config.vendorTokenTtl, 86400),
  }, config.signingKeysReloadMs);
  await keys.init();
  const environment = createEnvironmentService({ db, keys, vendorTokenTtl: config.vendorTokenTtl });

  // The outbox (issue 10): services emit events in the transaction of the change (`events.emit(tx, ...)`).
  const events = createEventsService();
  const tenants = createTenantsService({ db });
  const hierarchy = createHierarchyService({ db, tenants });
  const accountSettings = createAccountSettingsService({ db, tenants });
  const passwords = createPasswordService({ db });
  const roles = createRolesService({ db, environment });
  tenants.onRemove(async (tx, tenantId) => void (await roles.removeAccountRoles(tx, tenantId)));
  const users = createUsersService({ db, tenants, roles, passwords, environment });
  tenants.onRemove((tx, tenantId) => removeAccountUsers(tx, tenantId));
  tenants.onRemove((tx, tenantId) => passwords.forgetAccount(tx, tenantId));
  const auth = createAuth({ db, config, keys, environment, roles, users, passwords, tenants });
  tenants.onRemove((tx, tenantId) => auth.sessions.forgetAccount(tx, tenantId));

  const handlers = {};
  const jobs = createJobRunner({ db, log, pollMs: config.jobs.pollMs, leaseMs: config.jobs.leaseMs, handlers });
  const accountMigration = createAccountMigrationService({ db, jobs, tenants, chunkSize: config.jobs.chunkSize });
  Object.assign(handlers, accountMigrationJobs(accountMigration));
  // User migration (issue 4): bulk and identity-provider jobs; MFA secrets and provider secrets sealed with the KEK.
  const applications = createApplicationsService({ db });
  const userMigration = createUserMigrationService({ db, jobs, tenants, roles, users, kek, chunkSize: config.jobs.chunkSize });
  Object.assign(handlers, userMigrationJobs(userMigration, kek, { extraCa: config.outboundCaFile ? readFileSync(config.outboundCaFile, 'utf8') : undefined }));

  const entitlements = createEntitlementsService({ db, vendorId: () => environment.id, requireAccount: (q, tenantId) => tenants.requireLive(q, tenantId) });
  tenants.onRemove((tx, tenantId) => entitlements.forgetAccount(tx, tenantId));
  tenants.onCreate((tx, tenantIds) => entitlements.assignSignupPlans(tx, tenantIds));

  /** Verifiers for further token types (API tokens, access tokens, ...), by the `type` claim; added by their modules. */
  const tokenTypes = new Map<string, (claims: Record<string, unknown>) => Promise<AuthContext>>();
  const authenticate: Authenticate = async (token): Promise<AuthContext> => {
    const claims = await keys.verify(token);
    if (claims.aud !== environment.id && !(Array.isArray(claims.aud) && claims.aud.includes(environment.id))) {
      throw new AppError('INVALID_TOKEN', 'Token was issued for another environment');
    }
    if (claims.type === 'vendor') return environment.vendorContext(claims);
    const verifier = typeof claims.type === 'string' ? tokenTypes.get(claims.type) : undefined;
    if (verifier) return verifier(claims);
    if (claims.type === 'userToken') {
      const strings = (v: unknown) => (Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : []);
      if (typeof claims.sub !== 'string' || typeof claims.tenantId !== 'string') throw new AppError('INVALID_TOKEN', 'User token lacks sub or tenantId');
      return {
        kind: 'user',
        userId: claims.sub,
        tenantId: claims.tenantId,
        tenantIds: strings(claims.tenantIds),
        roles: strings(claims.roles),
        permissions: strings(claims.permissions),
        sessionId: typeof claims.sid === 'string' ? claims.sid : undefined,
        claims,
      };
    }
    throw new AppError('INVALID_TOKEN', 'Unknown token type');
  };

  return { config, db, log, keys, events, tokenTypes, environment, tenants, hierarchy, accountSettings, passwords, roles, users, auth, accountMigration, jobs, authenticate, entitlements, userMigration, applications };
}

export type Context = Awaited<ReturnType<typeof createContext>>;
