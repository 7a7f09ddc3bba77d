import { createHmac } from 'node:crypto';
import type { Logger } from 'pino';
import { createLogger as createBaseLogger } from './lib/log.ts';
import type { Config } from './config.ts';
import { createJobRunner } from './jobs/runner.ts';
import type { AuthContext, Authenticate } from './http/auth.ts';
import { AppError } from './http/errors.ts';
import type { Db, Queryable } from './storage/db.ts';
import { createInvalidation } from './storage/invalidation.ts';
import { createEnvironmentService } from './modules/environment/index.ts';
import { createKeysService, loadKeyEncryptionKey } from './modules/keys/index.ts';
import { createTenantsService } from './modules/tenants/index.ts';
import { createHierarchyService } from './modules/hierarchy/index.ts';
import { createAccountSettingsService } from './modules/account-settings/index.ts';
import { createPasswordService } from './modules/credentials/index.ts';
import { accountMigrationJobs, createAccountMigrationService } from './modules/account-migration/index.ts';
import { createRolesService } from './modules/roles/index.ts';
import { createApprovalFlowsService } from './modules/approval-flows/index.ts';
import { createUsersService, issueUnlockToken, UNLOCK_TOKEN_TTL_SECONDS } from './modules/users/index.ts';
// What modules the users module imports read of its records, given to them here (lookups.ts of users).
import { membersAmong, passwordHashOf, userTablesSql } from './modules/users/index.ts';
import { createAuth } from './modules/auth/index.ts';
import { createMfaService, MFA_FACTORS_SQL } from './modules/mfa/index.ts';
import { readFileSync } from 'node:fs';
import {
  createApplicationsService,
  createUserMigrationService,
  userMigrationJobs,
} from './modules/user-migration/index.ts';
import { createEntitlementsService } from './modules/entitlements/index.ts';
import { createEventsService, eventFeed } from './modules/events/index.ts';
import { createDispatcher, createWebhooksService } from './modules/webhooks/index.ts';
import { auditRetention, createAuditService } from './modules/audit/index.ts';
import { actLive, createMachineAccess, impersonationClaims } from './modules/api-tokens/index.ts';
import { createMessagingService } from './modules/messaging/index.ts';
import { createRecovery, RESET_LINK_TTL, RESET_SMS_CODE_TTL } from './modules/recovery/index.ts';
import { createCodeBook, createPasswordlessService, readFlowSettings } from './modules/passwordless/index.ts';
import { createSignupService } from './modules/signup/index.ts';
import { createInvitationsService, createInviteTokensService, type InviteBody } from './modules/invitations/index.ts';
import { createSso, SSO_OFFERED_SQL } from './modules/sso/index.ts';
import { ACTIVE_PROVIDER_TYPES_SQL, createSocialService } from './modules/social/index.ts';
import { createGroupsService } from './modules/groups/index.ts';
import { assertEmailDomainAllowed, createRestrictions } from './modules/restrictions/index.ts';
import { createUserPoolsService } from './modules/user-pools/index.ts';
import { createDirectoryService } from './modules/directory/index.ts';
import { createHousekeeping } from './modules/housekeeping/index.ts';
import { captchaSiteKey, createCaptchaService } from './modules/captcha/index.ts';
import { createJwtTemplatesService } from './modules/jwt-templates/index.ts';
// Purge rules of short-lived state, each declared by the module owning the table; auth's sessions for restrictions.
import { authPurgeRules, SESSIONS_SQL } from './modules/auth/index.ts';
import { mfaPurgeRules } from './modules/mfa/index.ts';
import { createWebAuthnService, webauthnFactors, webauthnPurgeRules } from './modules/webauthn/index.ts';
import { passwordlessPurgeRules } from './modules/passwordless/index.ts';
import { recoveryPurgeRules } from './modules/recovery/index.ts';
import { ssoPurgeRules } from './modules/sso/index.ts';
import { jobsPurgeRules } from './jobs/purge.ts';
import { createLimitsService, limitsPurgeRules } from './modules/limits/index.ts';
import { createOidcService, oidcPurgeRules } from './modules/oidc/index.ts';

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
  // Rate limits every instance shares, counted in PostgreSQL (sign-in, code and link sends, recovery).
  const limits = createLimitsService({ db });
  const codeRule = { limit: config.codeRateLimit.perIdentifier, windowSeconds: config.codeRateLimit.windowSeconds };
  const codeIpRule = { limit: config.codeRateLimit.perIp, windowSeconds: config.codeRateLimit.windowSeconds };
  // Caches of configuration are dropped on every instance through LISTEN/NOTIFY (each owner subscribes to its topic
  // and publishes on its writes); their time-to-live bounds staleness only while the listener is down.
  const invalidation = createInvalidation(db, log);
  await invalidation.start();
  const keys = createKeysService(
    {
      db,
      invalidation,
      kek,
      algorithm: config.jwtAlgorithm,
      issuer: config.publicUrl,
      graceSeconds: Math.max(config.vendorTokenTtl, 86400),
    },
    config.signingKeysReloadMs,
    config.signingKeysUnknownKidReloadMs,
  );
  await keys.init();
  // The login box reports the sign-in methods and reset lifetimes that the passwordless and recovery modules own,
  // and reads the social providers and the captcha key through those modules' SQL (they import the environment).
  const environment = createEnvironmentService({
    db,
    invalidation,
    keys,
    vendorTokenTtl: config.vendorTokenTtl,
    devOutbox: config.messaging.devOutbox,
    loginBox: {
      signInFlows: (q) => readFlowSettings(q, 'passwordless'),
      resetLifetimes: { linkSeconds: RESET_LINK_TTL, smsCodeSeconds: RESET_SMS_CODE_TTL },
      sql: { socialProviders: ACTIVE_PROVIDER_TYPES_SQL, mfaFactors: MFA_FACTORS_SQL, ssoOffered: SSO_OFFERED_SQL },
      captchaSiteKey,
    },
  });

  // The outbox: services emit events in the transaction of the change (`events.emit(tx, ...)`); and the bus of
  // domain events (`events.bus`), whose subscribers are registered below, once every service exists.
  const events = createEventsService({ enabled: config.events.enabled });
  const tenants = createTenantsService({ db, events, listCache: { broadMatches: config.accountListBroadMatches } });
  const hierarchy = createHierarchyService({ db, tenants, events });
  const accountSettings = createAccountSettingsService({ db, tenants });
  const passwords = createPasswordService({
    db,
    invalidation,
    hashConcurrency: config.passwordHashConcurrency,
    passwordHashOf,
    bus: events.bus,
  });
  const roles = createRolesService({ db, environment, tenants, userTables: userTablesSql });
  // Durable jobs; their handlers are added by the modules that own them, as those are built.
  const handlers = {};
  const jobs = createJobRunner({ db, log, pollMs: config.jobs.pollMs, leaseMs: config.jobs.leaseMs, handlers });
  // Messaging: email (SMTP) and SMS (Twilio REST) delivery through durable jobs; development outbox when no provider.
  const messaging = createMessagingService({
    db,
    kek,
    jobs,
    log,
    publicUrl: config.publicUrl,
    devOutbox: config.messaging.devOutbox,
    maxAttempts: config.messaging.maxAttempts,
  });
  Object.assign(handlers, messaging.jobs);
  // IP and email-domain restrictions (the sign-in's IP gate), user pools.
  const restrictions = createRestrictions({
    db,
    invalidation,
    tenants,
    signInTables: { userRoles: userTablesSql.userRoles, sessions: SESSIONS_SQL },
  });
  const userPools = createUserPoolsService({ db, kek });
  // Account invite tokens: a shared link to join an account at sign-up, password or passwordless sign-in.
  const inviteTokens = createInviteTokensService({ db, kek, roles, events, messaging, vendorId: () => environment.id });
  // Secondary email addresses (/users/emails/v1) are proven with a code emailed through messaging.
  const users = createUsersService({
    db,
    tenants,
    roles,
    passwords,
    environment,
    events,
    emailCodes: {
      kek,
      sendEmail: (tx, m) => messaging.sendEmail(tx, m),
      limiter: limits.limiter('email-codes', codeRule),
    },
    // A password change: the sign-in's limits and failure count apply to the current password; other sessions end.
    // Functions over `auth`, called only after it exists: auth's sign-in reads users through this service.
    passwordChecks: {
      limit: (ip, id, q) => auth.login.limitAttempt(ip, id, q),
      failed: (user, attempt) => auth.login.registerFailure(user, attempt),
      endOtherSessions: (q, userId, keep) => auth.sessions.endOtherSessions(q, userId, keep),
    },
    // POST /sub-tenants/users/v2/ (users module) invites through the invitations module, which depends on users.
    invite: (tenantId, body, by) => invitations.invite(tenantId, body as InviteBody, by),
  });
  // User groups: members receive the groups' roles (a role source of the token issuer).
  const groups = createGroupsService({
    db,
    roles,
    tenants,
    environment,
    users: { membersAmong, tables: userTablesSql },
  });
  // The MFA and sign-up modules sign users in through auth (login), so their gates, the `acr` claim and the step-up
  // factor below are functions over those services, called only after they exist.
  // JWT templates: targeting rules choose the claims and lifetime of a user access token (read from a cache).
  const jwtTemplates = createJwtTemplatesService({ db, vendorId: () => environment.id, invalidation });
  const auth = createAuth({
    invalidation,
    db,
    config,
    limits,
    keys,
    environment,
    roles,
    users,
    passwords,
    tenants,
    events,
    roleSources: [groups.roleSource],
    claimSources: [(q, a) => mfa.core.acr(q, a), impersonationClaims],
    tokenTemplate: (q, a) => jwtTemplates.forToken(q, a),
    // In order: a refused address gets no second-factor challenge; activation refuses before MFA challenges.
    gates: [
      { name: 'ip-restrictions', gate: (q, a) => restrictions.ip.gate(q, a) },
      // Stable: a user is pending only from sign-up until activated, so the MFA verify (resuming 'mfa') skips it.
      { name: 'activation', gate: (q, a) => signup.gate(q, a), stable: true, prefetch: (u) => signup.gatePrefetch(u) },
      { name: 'mfa', gate: (q, a) => mfa.core.gate(q, a), prefetch: (u) => mfa.core.gatePrefetch(u) },
    ],
    inviteJoin: (q, user, token) => inviteTokens.join(q, user, token),
    // Step-up re-authentication accepts a current code of the user's authenticator app besides the password.
    stepUpFactor: (userId, code) => mfa.devices.checkCode(userId, code),
    resetTokens: (q, t) => recovery.storeResetToken(q, t),
    acts: actLive,
  });
  // MFA: the `mfa` sign-in gate, second-factor flows, policy; authenticator secrets sealed with the KEK.
  const mfa = createMfaService({
    invalidation,
    db,
    kek,
    login: auth.login,
    issue: auth.issue,
    passwords,
    events,
    requireAccount: (q, tenantId) => tenants.requireLive(q, tenantId),
    messaging,
    // WebAuthn credentials (owned by the webauthn module, which signs in through this one): listed and counted.
    webauthn: webauthnFactors,
    // Five code sends per user in five minutes, shared by every instance.
    sends: limits.limiter('mfa-sends', { limit: 5, windowSeconds: 300 }),
    limits: {
      perIp: config.loginRateLimit.perIp,
      perUser: config.loginRateLimit.perIdentifier,
      windowSeconds: config.loginRateLimit.windowSeconds,
    },
  });

  // WebAuthn (passkeys): second factor through the MFA completion path, and first factor (discoverable credentials).
  const webauthn = createWebAuthnService({ db, kek, party: config.webauthn, mfa, login: auth.login });

  const accountMigration = createAccountMigrationService({
    db,
    jobs,
    tenants,
    chunkSize: config.jobs.chunkSize,
    events,
  });
  Object.assign(handlers, accountMigrationJobs(accountMigration));
  // User migration: bulk and identity-provider jobs; MFA secrets and provider secrets sealed with the KEK.
  const applications = createApplicationsService({ db, tenants });
  const userMigration = createUserMigrationService({
    db,
    jobs,
    tenants,
    roles,
    users,
    kek,
    chunkSize: config.jobs.userChunkSize,
    events,
  });
  Object.assign(
    handlers,
    userMigrationJobs(userMigration, kek, {
      extraCa: config.outboundCaFile ? readFileSync(config.outboundCaFile, 'utf8') : undefined,
    }),
  );
  // Password reset (email link, SMS code) and email verification.
  const recovery = createRecovery({
    db,
    kek,
    config,
    passwords,
    messaging,
    events,
    endSessions: (userId) => auth.sessions.revokeAll(userId),
    limits,
  });
  // Sign-up and activation, invitations, passwordless: one-time links and codes, delivered by messaging.
  const codeLimits = (flow: string) => ({
    perIp: limits.limiter(`${flow}:ip`, codeIpRule),
    perIdentifier: limits.limiter(`${flow}:id`, codeRule),
  });
  const codes = createCodeBook(kek);
  // endSessions: a flow that proved the mailbox dropped a temporary password; sessions it may have started end.
  const endSessions = (q: Queryable, userId: string) => auth.sessions.endUserSessions(q, userId, 'mailbox proven');
  const flowDeps = { db, passwords, login: auth.login, codes, delivery: messaging, events, inviteTokens, endSessions };
  const passwordless = createPasswordlessService({ ...flowDeps, limits: codeLimits('passwordless') });
  const signup = createSignupService({
    ...flowDeps,
    environment,
    tenants,
    roles,
    limits: codeLimits('signup'),
    publicUrl: config.publicUrl,
  });
  const invitations = createInvitationsService({
    ...flowDeps,
    tenants,
    roles,
    users,
    limits: codeLimits('invitations'),
  });

  const entitlements = createEntitlementsService({
    db,
    vendorId: () => environment.id,
    requireAccount: (q, tenantId) => tenants.requireLive(q, tenantId),
    events,
  });

  // Events, webhooks, audit: the dispatcher and audit retention run with the job runner.
  const dispatcher = createDispatcher({ db, kek, log, feed: eventFeed, ...config.webhooks });
  events.onEmit(() => dispatcher.eventsEmitted());
  jobs.attach(dispatcher);
  const webhooks = createWebhooksService({
    db,
    kek,
    dispatcher,
    feed: eventFeed,
    timeoutMs: config.webhooks.timeoutMs,
    retryForSeconds: config.webhooks.retryForSeconds,
    allowPrivateNetworks: config.webhooks.allowPrivateNetworks,
    retentionDays: config.webhooks.eventsRetentionDays,
    requireAccount: (q, tenantId) => tenants.requireLive(q, tenantId),
  });
  const audit = createAuditService({ db, log, ...config.audit, vendorId: () => environment.id });
  jobs.attach(audit.chainer); // chains staged audit entries (audit/chainer.ts); reads chain on their own too
  jobs.attach(auditRetention(audit, log, undefined, { events: () => webhooks.applyRetention() }));
  // Housekeeping: bounded purges of expired sign-in state (flow states, MFA tokens, codes, ended sessions).
  const housekeeping = createHousekeeping({
    db,
    log,
    rules: [
      ...ssoPurgeRules,
      ...limitsPurgeRules,
      ...mfaPurgeRules,
      ...webauthnPurgeRules,
      ...passwordlessPurgeRules,
      ...recoveryPurgeRules,
      ...authPurgeRules,
      ...oidcPurgeRules,
      ...jobsPurgeRules,
    ],
  });
  jobs.attach(housekeeping.worker);

  /** Verifiers for further token types (API tokens, access tokens, ...), by the `type` claim; added by their modules. */
  const tokenTypes = new Map<string, (claims: Record<string, unknown>) => Promise<AuthContext>>();
  // Machine access: API tokens, access tokens, delegation, impersonation; their JWT types and removal hook.
  const machine = createMachineAccess({
    db,
    keys,
    environment,
    roles,
    users,
    tenants,
    issue: auth.issue,
    events,
    log,
    ipAllowed: restrictions.ip.allows,
  });
  for (const [type, verify] of machine.tokenTypes) tokenTypes.set(type, verify);
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
      if (typeof claims.sub !== 'string' || typeof claims.tenantId !== 'string')
        throw new AppError('INVALID_TOKEN', 'User token lacks sub or tenantId');
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

  // SSO per account and social login: SAML/OIDC connections, domains, JIT provisioning.
  const sso = createSso({
    db,
    kek,
    publicUrl: config.publicUrl,
    environment,
    roles,
    tenants,
    events,
    login: auth.login,
    domainCheck: (q, tenantId, email) => assertEmailDomainAllowed(q, tenantId, email),
    allowPrivateNetworks: config.outbound.allowPrivateNetworks,
  });
  const social = createSocialService({
    db,
    kek,
    environment,
    roles,
    tenants,
    events,
    login: auth.login,
    domainCheck: (q, tenantId, email) => assertEmailDomainAllowed(q, tenantId, email),
  });

  // Directory: SCIM connections and the SCIM service; provisioned users are users of the connection's account.
  const directory = createDirectoryService({
    invalidation,
    db,
    tenants,
    roles,
    events,
    sessions: auth.sessions,
    passwords,
    jobs,
    chunkSize: config.jobs.chunkSize,
    publicUrl: config.publicUrl,
    scim: config.scim,
  });
  Object.assign(handlers, directory.jobs);

  // Domain events (events/domain.ts): each subscriber runs in the publisher's transaction, in the order registered
  // here; an error rolls the publisher's change back. A removed account's roles go first, then its users.
  const { bus } = events;
  bus.on('account.removed', (tx, { tenantId }) => roles.removeAccountRoles(tx, tenantId));
  bus.on('account.removed', (tx, { tenantId }) => users.forgetAccount(tx, tenantId));
  bus.on('account.removed', (tx, { tenantId }) => passwords.forgetAccount(tx, tenantId));
  bus.on('account.removed', (tx, { tenantId }) => groups.forgetAccount(tx, tenantId));
  bus.on('account.removed', (tx, { tenantId }) => auth.sessions.forgetAccount(tx, tenantId));
  bus.on('account.removed', (tx, { tenantId }) => restrictions.forgetAccount(tx, tenantId));
  bus.on('account.removed', (tx, { tenantId }) => mfa.forgetAccount(tx, tenantId));
  bus.on('account.removed', (tx, { tenantId }) => inviteTokens.forgetAccount(tx, tenantId));
  bus.on('account.removed', (tx, { tenantId }) => entitlements.forgetAccount(tx, tenantId));
  bus.on('account.removed', (tx, { tenantId }) => machine.forgetAccount(tx, tenantId));
  bus.on('account.removed', (tx, { tenantId }) => sso.forgetAccount(tx, tenantId));
  bus.on('account.removed', (tx, { tenantId }) => directory.forgetAccount(tx, tenantId));
  bus.on('accounts.created', (tx, { tenantIds }) => entitlements.assignSignupPlans(tx, tenantIds));
  // A user the lockout policy locks gets the BruteForceProtection email with a one-time unlock link
  // (POST /identity/resources/users/v3/me/unlock), in the transaction that sets the lock.
  bus.on('user.locked_out', async (tx, user) => {
    if (!user.email) return; // no mailbox for the unlock link: an administrator unlocks the user
    const { token } = await issueUnlockToken(tx, user.id);
    await messaging.sendEmail(tx, {
      tenantId: user.active_tenant_id,
      to: user.email,
      type: 'BruteForceProtection',
      vars: { name: user.name ?? '', expiresInMinutes: String(UNLOCK_TOKEN_TTL_SECONDS / 60) },
      linkParams: { token },
    });
  });
  // A change of a user's email voids the verification and reset links and codes sent to the old address.
  bus.on('user.email_changed', (tx, { userId }) => recovery.forgetEmailProofs(tx, userId));

  // The OpenID provider (OIDC_PROVIDER_ENABLED): clients are the applications, tokens the platform's user tokens.
  const oidc = config.oidcProvider.enabled
    ? createOidcService({
        db,
        issuer: config.publicUrl,
        secureCookies: config.publicUrl.startsWith('https://'),
        cookieKey: createHmac('sha256', kek).update('gatehouse openid provider cookies').digest('base64url'),
        keys,
        environment,
        users,
        tenants,
        login: auth.login,
        clients: (id) => applications.credentials.openIdClient(id),
        ttl: {
          accessToken: config.oidcProvider.accessTokenTtl,
          code: config.oidcProvider.codeTtl,
          refreshToken: config.oidcProvider.refreshTokenTtl,
        },
      })
    : undefined;

  // Captcha policy: the public sign-in, sign-up, passwordless, reset and activation routes check recaptchaToken (routes.ts).
  const captcha = createCaptchaService({ db, kek, verifyUrl: config.captcha.verifyUrl, log, invalidation });

  return {
    invalidation,
    // Signs the hosted pages' cookies (CSRF): derived from the KEK, so the same on every instance and restart.
    pagesCookieSecret: createHmac('sha256', kek).update('gatehouse hosted pages cookies').digest('base64url'),
    approvalFlows: createApprovalFlowsService({ db, events, users, vendorId: () => environment.id }),
    captcha,
    jwtTemplates,
    oidc,
    housekeeping,
    directory,
    groups,
    restrictions,
    userPools,
    sso,
    social,
    machine,
    mfa,
    webauthn,
    config,
    db,
    log,
    keys,
    events,
    webhooks,
    audit,
    dispatcher,
    tokenTypes,
    environment,
    tenants,
    hierarchy,
    accountSettings,
    passwords,
    roles,
    users,
    auth,
    accountMigration,
    jobs,
    authenticate,
    entitlements,
    userMigration,
    applications,
    messaging,
    recovery,
    passwordless,
    signup,
    invitations,
    inviteTokens,
  };
}

export type Context = Awaited<ReturnType<typeof createContext>>;
