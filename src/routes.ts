import type { Context } from './context.ts';
import { createHttp } from './http/app.ts';
import { environmentRoutes } from './modules/environment/index.ts';
import { keysRoutes } from './modules/keys/index.ts';
import { tenantsRoutes } from './modules/tenants/index.ts';
import { hierarchyRoutes } from './modules/hierarchy/index.ts';
import { accountSettingsRoutes } from './modules/account-settings/index.ts';
import { accountMigrationRoutes } from './modules/account-migration/index.ts';
import { securityPolicyRoutes } from './modules/credentials/index.ts';
import { rolesRoutes } from './modules/roles/index.ts';
import { meRoutes, usersRoutes } from './modules/users/index.ts';
import { authRoutes } from './modules/auth/index.ts';
import { userMigrationRoutes } from './modules/user-migration/index.ts';
import { entitlementsRoutes } from './modules/entitlements/index.ts';

/** Builds the API server over a context: the HTTP shell plus every module's routes. */
export async function buildApp(ctx: Context, opts: { logger?: boolean } = {}) {
  const app = await createHttp({
    bodyLimit: ctx.config.bodyLimit,
    publicUrl: ctx.config.publicUrl,
    logger: opts.logger === false ? false : ctx.log,
    authenticate: ctx.authenticate,
    ready: async () => (await ctx.db.query('SELECT 1 AS ok')).rows.length === 1,
  });
  await app.register(keysRoutes, { keys: ctx.keys });
  await app.register(environmentRoutes, { environment: ctx.environment });
  await app.register(tenantsRoutes, { tenants: ctx.tenants });
  await app.register(hierarchyRoutes, { hierarchy: ctx.hierarchy });
  await app.register(accountSettingsRoutes, { accountSettings: ctx.accountSettings });
  await app.register(accountMigrationRoutes, { accountMigration: ctx.accountMigration });
  await app.register(securityPolicyRoutes, { passwords: ctx.passwords });
  await app.register(rolesRoutes, { roles: ctx.roles });
  await app.register(usersRoutes, { users: ctx.users });
  await app.register(meRoutes, { users: ctx.users });
  await app.register(authRoutes, { login: ctx.auth.login, sessions: ctx.auth.sessions, users: ctx.users, environment: ctx.environment, secureCookies: ctx.config.publicUrl.startsWith('https://') });
  await app.register(entitlementsRoutes, { entitlements: ctx.entitlements });
  await app.register(userMigrationRoutes, { userMigration: ctx.userMigration, applications: ctx.applications });
  await app.ready();
  return app;
}
