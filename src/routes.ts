import type { Context } from './context.ts';
import { createHttp } from './http/app.ts';
import { auditRoutes, installAudit } from './modules/audit/index.ts';
import { webhooksRoutes } from './modules/webhooks/index.ts';
import { environmentRoutes } from './modules/environment/index.ts';
import { keysRoutes } from './modules/keys/index.ts';
import { tenantsRoutes } from './modules/tenants/index.ts';
import { hierarchyRoutes } from './modules/hierarchy/index.ts';
import { accountSettingsRoutes } from './modules/account-settings/index.ts';
import { accountMigrationRoutes } from './modules/account-migration/index.ts';
import { securityPolicyRoutes } from './modules/credentials/index.ts';
import { rolesRoutes } from './modules/roles/index.ts';
import { findByEmail, findById, findByUsername, meRoutes, userLabel, usersRoutes } from './modules/users/index.ts';
import { isUuid } from './lib/pg-errors.ts';
import { authRoutes } from './modules/auth/index.ts';
import { mountProvider, oidcHandoff, oidcInteractionRoutes, oidcUserInfoRoutes } from './modules/oidc/index.ts';
import { mfaRoutes } from './modules/mfa/index.ts';
import { webauthnRoutes } from './modules/webauthn/index.ts';
import { userMigrationRoutes } from './modules/user-migration/index.ts';
import { entitlementsRoutes } from './modules/entitlements/index.ts';
import { ssoRoutes } from './modules/sso/index.ts';
import { socialRoutes } from './modules/social/index.ts';
import { apiTokensRoutes, delegationRoutes } from './modules/api-tokens/index.ts';
import { messagingRoutes } from './modules/messaging/index.ts';
import { phoneNumbersRoutes, recoveryRoutes } from './modules/recovery/index.ts';

import { passwordlessRoutes } from './modules/passwordless/index.ts';
import { signupRoutes } from './modules/signup/index.ts';
import { invitationsRoutes, inviteTokensRoutes } from './modules/invitations/index.ts';
import { groupsRoutes } from './modules/groups/index.ts';
import { restrictionsRoutes } from './modules/restrictions/index.ts';
import { userPoolsRoutes } from './modules/user-pools/index.ts';
import { canonicalScimUrl, directoryRoutes, scimRoutes, SCIM_PREFIX } from './modules/directory/index.ts';
import { captchaRoutes, installCaptcha } from './modules/captcha/index.ts';
import { jwtTemplatesRoutes } from './modules/jwt-templates/index.ts';
import { approvalFlowsRoutes } from './modules/approval-flows/index.ts';
import { installPageKit } from './http/pages/kit.ts';
import { signinPagesRoutes } from './modules/signin-pages/index.ts';
import { accountPagesRoutes } from './modules/account-pages/index.ts';
import { passkeyPagesRoutes, passkeySlots } from './modules/passkey-pages/index.ts';
/** Builds the API server over a context: the HTTP shell plus every module's routes. */
export async function buildApp(ctx: Context, opts: { logger?: boolean; draining?: () => boolean } = {}) {
  const app = await createHttp({
    bodyLimit: ctx.config.bodyLimit,
    trustProxy: ctx.config.trustProxy,
    publicUrl: ctx.config.publicUrl,
    logger: opts.logger === false ? false : ctx.log,
    authenticate: ctx.authenticate,
    rewriteUrl: canonicalScimUrl,
    recentAuthMaxAge: ctx.config.recentAuthMaxAge,
    checkLive: (auth) => ctx.auth.liveness.check(auth),
    ready: async () => (await ctx.db.query('SELECT 1 AS ok')).rows.length === 1,
    draining: opts.draining,
  });
  // The invalidation listener (a connection of its own on PostgreSQL) stops with the app.
  app.addHook('onClose', () => ctx.invalidation.close());
  // The audit hook is on the root instance, before any module's routes, so it sees every write route.
  installAudit(app, ctx.audit, {
    // What an entry shows of its target (a user's email, an account's name) and whom a failed sign-in named.
    display: async (type, id) => {
      if (type === 'account') return (await ctx.tenants.get(id))?.name;
      const u = isUuid(id) ? await findById(ctx.db, id) : undefined;
      return u && userLabel(u);
    },
    user: async (identifier, by) => {
      const u = by === 'email' ? await findByEmail(ctx.db, identifier) : await findByUsername(ctx.db, identifier);
      return u && { id: u.id, tenantId: u.active_tenant_id, email: userLabel(u) };
    },
  });
  // The captcha check (policy on) of the public sign-in, sign-up, passwordless, reset and activation routes: also root.
  installCaptcha(app, ctx.captcha);
  await app.register(captchaRoutes, { captcha: ctx.captcha });
  await app.register(jwtTemplatesRoutes, { jwtTemplates: ctx.jwtTemplates });
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
  await app.register(authRoutes, {
    login: ctx.auth.login,
    sessions: ctx.auth.sessions,
    users: ctx.users,
    environment: ctx.environment,
    secureCookies: ctx.config.publicUrl.startsWith('https://'),
    apiTokens: ctx.machine.apiTokens,
    oidc: ctx.oidc && oidcHandoff(ctx.oidc, ctx.config.publicUrl),
  });
  if (ctx.oidc) {
    mountProvider(app, ctx.oidc);
    await app.register(oidcUserInfoRoutes);
  }
  await app.register(mfaRoutes, {
    mfa: ctx.mfa,
    environment: ctx.environment,
    secureCookies: ctx.config.publicUrl.startsWith('https://'),
  });
  await app.register(webauthnRoutes, {
    webauthn: ctx.webauthn,
    environment: ctx.environment,
    secureCookies: ctx.config.publicUrl.startsWith('https://'),
  });
  await app.register(entitlementsRoutes, { entitlements: ctx.entitlements });
  await app.register(apiTokensRoutes, { apiTokens: ctx.machine.apiTokens, accessTokens: ctx.machine.accessTokens });
  await app.register(delegationRoutes, { delegation: ctx.machine.delegation });
  await app.register(userMigrationRoutes, { userMigration: ctx.userMigration, applications: ctx.applications });
  await app.register(messagingRoutes, { messaging: ctx.messaging });
  await app.register(recoveryRoutes, { reset: ctx.recovery.reset, verification: ctx.recovery.verification });
  await app.register(phoneNumbersRoutes, { phones: ctx.recovery.phones });
  const flowCookies = { environment: ctx.environment, secureCookies: ctx.config.publicUrl.startsWith('https://') };
  await app.register(passwordlessRoutes, { passwordless: ctx.passwordless, ...flowCookies });
  await app.register(signupRoutes, { signup: ctx.signup, ...flowCookies });
  await app.register(invitationsRoutes, { invitations: ctx.invitations, ...flowCookies });
  await app.register(inviteTokensRoutes, {
    db: ctx.db,
    tokens: ctx.inviteTokens,
    invitations: ctx.invitations,
    resendActivation: (email, client) => ctx.signup.resend(email, client),
  });
  await app.register(ssoRoutes, {
    configs: ctx.sso.configs,
    sso: ctx.sso.login,
    environment: ctx.environment,
    secureCookies: ctx.config.publicUrl.startsWith('https://'),
  });
  await app.register(socialRoutes, {
    social: ctx.social,
    environment: ctx.environment,
    secureCookies: ctx.config.publicUrl.startsWith('https://'),
  });
  await app.register(groupsRoutes, { groups: ctx.groups });
  await app.register(restrictionsRoutes, {
    ip: ctx.restrictions.ip,
    ipBulk: ctx.restrictions.ipBulk,
    domains: ctx.restrictions.domains,
  });
  await app.register(userPoolsRoutes, { userPools: ctx.userPools });
  await app.register(webhooksRoutes, { webhooks: ctx.webhooks });
  await app.register(auditRoutes, { audit: ctx.audit });
  await app.register(directoryRoutes, { directory: ctx.directory });
  await app.register(approvalFlowsRoutes, { approvalFlows: ctx.approvalFlows });
  await app.register(scimRoutes, { prefix: SCIM_PREFIX, directory: ctx.directory, publicUrl: ctx.config.publicUrl });
  // The hosted pages (/account/...) and the OpenID provider's interactions: one encapsulated scope with the page kit
  // (form bodies, cookies, CSRF, security headers, HTML errors), so none of it reaches the JSON API.
  await app.register(async (pages) => {
    await installPageKit(pages, {
      cookieSecret: ctx.pagesCookieSecret,
      secureCookies: ctx.config.publicUrl.startsWith('https://'),
      brand: () => ctx.environment.branding.get(),
    });
    const passkeys = passkeySlots({ webauthn: ctx.webauthn, recentAuthMaxAge: ctx.config.recentAuthMaxAge });
    const signin = {
      login: ctx.auth.login,
      environment: ctx.environment,
      captcha: ctx.captcha,
      passwordless: ctx.passwordless,
      social: ctx.social,
      sso: ctx.sso.login,
      signup: ctx.signup,
      reset: ctx.recovery.reset,
      verification: ctx.recovery.verification,
      invitations: ctx.invitations,
      unlock: (token: string) => ctx.users.unlockWithToken(token),
      secureCookies: ctx.config.publicUrl.startsWith('https://'),
      loginExtra: passkeys.login,
    };
    const account = {
      mfa: ctx.mfa,
      login: ctx.auth.login,
      sessions: ctx.auth.sessions,
      users: ctx.users,
      environment: ctx.environment,
      authenticate: ctx.authenticate,
      secureCookies: ctx.config.publicUrl.startsWith('https://'),
      recentAuthMaxAge: ctx.config.recentAuthMaxAge,
      passkeys: passkeys.me,
      passkeyFactor: passkeys.mfa,
      passkeyScripts: passkeys.scripts,
    };
    await pages.register(signinPagesRoutes, signin);
    await pages.register(accountPagesRoutes, account);
    await pages.register(passkeyPagesRoutes, { webauthn: ctx.webauthn, signin, account });
    if (ctx.oidc) await oidcInteractionRoutes(pages, { oidc: ctx.oidc });
  });
  await app.ready();
  return app;
}
