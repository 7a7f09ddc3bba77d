import type { Db, Queryable } from '../../storage/db.ts';
import type { AuthStrategy, PublicConfig, RecoveryStrategies, VendorConfigBasic } from './login-box.schema.ts';
import { factsSql, readFacts, type LoginBoxSql } from './login-box.store.ts';
import type { VendorSettings } from './schema.ts';

/** Which sign-in methods are on: the passwordless module keeps them (signin_flow_settings 'passwordless'). */
export interface SignInFlows {
  EmailAndPassword: { active: boolean };
  MagicLink: { active: boolean };
  Code: { active: boolean };
  SmsCode: { active: boolean };
}

/** What the login box tells of flows owned by modules built on this one: given by src/context.ts. */
export interface LoginBoxFlows {
  signInFlows: (q: Queryable) => Promise<SignInFlows>;
  /** Lifetimes of the recovery module's reset link and SMS code, in seconds. */
  resetLifetimes: { linkSeconds: number; smsCodeSeconds: number };
  /** The owners' SQL the facts statement embeds (the social providers). */
  sql: LoginBoxSql;
  /** The captcha module's public site key when its policy is enabled (one statement of its own). */
  captchaSiteKey: (q: Queryable) => Promise<string | undefined>;
}

export interface LoginBoxDeps extends LoginBoxFlows {
  db: Db;
  /** With no provider configured, messages go to the development outbox (config.messaging.devOutbox). */
  devOutbox: boolean;
  settings: () => Promise<VendorSettings>;
}

/** Which channels deliver and which message templates are switched off: what decides a message-based method. */
export interface Channels {
  email: boolean;
  sms: boolean;
  /** The channel delivers and the template of that message type is active. */
  emailFor(type: string): boolean;
  smsFor(type: string): boolean;
}

export type LoginBox = ReturnType<typeof createLoginBox>;

/** The public, read-only view of the environment's sign-in configuration for login boxes (no secrets). */
export function createLoginBox(deps: LoginBoxDeps) {
  const { db } = deps;
  const factsText = factsSql(deps.sql);

  async function facts() {
    const row = await readFacts(db, factsText);
    const email = row.mail || deps.devOutbox;
    const sms = row.sms || deps.devOutbox;
    const channels: Channels = {
      email,
      sms,
      emailFor: (type) => email && !row.inactive_email.includes(type),
      smsFor: (type) => sms && !row.inactive_sms.includes(type),
    };
    return { row, channels };
  }

  return {
    channels: async (): Promise<Channels> => (await facts()).channels,

    async basic(): Promise<VendorConfigBasic> {
      const s = await deps.settings();
      return { forcePermissions: s.forcePermissions, machineToMachineAuthStrategy: s.machineToMachineAuthStrategy };
    },

    async publicConfig(): Promise<PublicConfig> {
      const [s, { row, channels }, flows, siteKey] = await Promise.all([
        deps.settings(),
        facts(),
        deps.signInFlows(db),
        deps.captchaSiteKey(db),
      ]);
      const signIn = {
        password: flows.EmailAndPassword.active,
        magicLink: flows.MagicLink.active && channels.emailFor('MagicLink'),
        emailCode: flows.Code.active && channels.emailFor('OTC'),
        smsCode: flows.SmsCode.active && channels.smsFor('OTC'),
        sso: row.sso,
        socialProviders: row.social,
      };
      const authStrategy: AuthStrategy = signIn.password
        ? 'EmailAndPassword'
        : signIn.magicLink
          ? 'MagicLink'
          : signIn.emailCode
            ? 'Code'
            : signIn.smsCode
              ? 'SmsCode'
              : 'NoLocalAuthentication';
      return {
        allowSignups: s.allowSignups,
        allowNotVerifiedUsersLogin: false,
        apiTokensEnabled: s.apiTokensEnabled,
        forcePermissions: s.forcePermissions,
        machineToMachineAuthStrategy: s.machineToMachineAuthStrategy,
        authStrategy,
        embeddedMode: true,
        loginBoxVisible: true,
        signIn,
        mfa: {
          authenticationApp: row.mfa_authenticator,
          sms: row.mfa_sms && channels.smsFor('MFAOTC'),
          email: row.mfa_email && channels.emailFor('MFAOTC'),
        },
        delivery: { email: channels.email, sms: channels.sms },
        captcha: siteKey ? { enabled: true, siteKey } : { enabled: false },
      };
    },

    /** Password reset by emailed link and by SMS code (both always built in): on when the message can go out. */
    async recoveryStrategies(): Promise<RecoveryStrategies> {
      const { channels } = await facts();
      const email = channels.emailFor('ResetPassword');
      const sms = channels.smsFor('ResetPassword');
      return {
        email: { active: email, strategy: 'link', expiresInMinutes: deps.resetLifetimes.linkSeconds / 60 },
        sms: { active: sms, strategy: 'code', expiresInMinutes: deps.resetLifetimes.smsCodeSeconds / 60 },
        strategies: [...(email ? ['email' as const] : []), ...(sms ? ['sms' as const] : [])],
      };
    },
  };
}
