import { isIP } from 'node:net';
import { availableParallelism } from 'node:os';
import { resolve } from 'node:path';

/** Everything Gatehouse reads from its environment, validated once. The only module that touches process.env. */
export interface Config {
  port: number;
  host: string;
  agentPort: number;
  /** The entitlements agent (src/agent.ts): where it pulls snapshots from, how often, where it keeps the last one. */
  agent: {
    host: string;
    serverUrl: string;
    pollMs: number;
    snapshotFile: string;
    clientId?: string;
    apiKey?: string;
    credentialsFile: string;
  };
  dataDir: string;
  databaseUrl?: string;
  /** Operator-supplied environment credentials; generated on first start when both are unset. */
  clientId?: string;
  apiKey?: string;
  /** Key-encryption key for signing keys at rest; when unset, generated once into DATA_DIR/encryption.key. */
  encryptionKey?: string;
  logLevel: string;
  bodyLimit: number;
  /**
   * Which proxies in front of the API may name the client address (`X-Forwarded-For`): false (the socket's peer is
   * the client), true (any), a hop count, or addresses/CIDR ranges (proxy-addr names such as `loopback` too).
   */
  trustProxy: boolean | number | string[];
  jwtAlgorithm: 'RS256' | 'ES256' | 'EdDSA';
  publicUrl: string;
  /**
   * WebAuthn relying party: the RP ID (WEBAUTHN_RP_ID, else PUBLIC_URL's host name) and the origins whose
   * ceremonies are accepted (PUBLIC_URL's, plus WEBAUTHN_ORIGINS, comma-separated, for front ends on other hosts);
   * the name authenticators show (WEBAUTHN_RP_NAME, default Gatehouse).
   */
  webauthn: { rpId: string; rpName: string; origins: string[] };
  vendorTokenTtl: number;
  /** How old cached signing keys may get before they are re-read (another instance may have rotated). */
  signingKeysReloadMs: number;
  /** A token naming an unknown key id reloads the keys at most once per this many ms; others are refused at once. */
  signingKeysUnknownKidReloadMs: number;
  /**
   * `userChunkSize`: users per transaction of a bulk user-migration job (USER_MIGRATION_CHUNK_SIZE, else JOB_CHUNK_SIZE
   * when set); undefined lets the user migration choose per store (src/modules/user-migration/service.ts).
   */
  jobs: { enabled: boolean; pollMs: number; leaseMs: number; chunkSize: number; userChunkSize?: number };
  /** Sign-in attempts allowed per window, per client IP and per identifier (email/username). */
  /** Failed sign-ins per address, per identifier, per address and identifier; all attempts per address (flood). */
  loginRateLimit: {
    perIp: number;
    perIdentifier: number;
    perIpIdentifier: number;
    floodPerIp: number;
    windowSeconds: number;
  };
  /** Password hashes computed at once (argon2id and the imported formats; the rest wait in order). Default: the CPUs. */
  passwordHashConcurrency: number;
  /** Account list: a filter counted above this many matches is answered from the cached ids (tenants list.cache.ts). */
  accountListBroadMatches: number;
  production: boolean;
  /** PEM file of extra CA certificates trusted by outbound HTTPS (identity-provider migration), besides the system ones. */
  outboundCaFile?: string;
  /**
   * Outbound requests an account administrator or a sign-in can point (SSO: SAML metadata URLs, OIDC issuers):
   * private, loopback, link-local and metadata addresses only when allowed (an IdP on a private network). Default off.
   */
  outbound: { allowPrivateNetworks: boolean };
  /**
   * The OpenID Connect provider (authorization code flow, docs/openid-provider.md): off until enabled, since its
   * sign-in step is the hosted login page. Lifetimes in seconds.
   */
  oidcProvider: { enabled: boolean; accessTokenTtl: number; codeTtl: number; refreshTokenTtl: number };
  /** Events, webhooks and audit (docs/events.md). `enabled` switches off the outbox / audit log (a benchmark aid). */
  events: { enabled: boolean };
  webhooks: {
    pollMs: number;
    timeoutMs: number;
    retryForSeconds: number;
    backoffBaseMs: number;
    backoffMaxMs: number;
    concurrency: number;
    allowPrivateNetworks: boolean;
    eventsRetentionDays: number;
  };
  audit: { enabled: boolean; retentionDays: number; chainBatch: number };
  /** Messaging: the development outbox (default on unless production) and delivery attempts per message. */
  messaging: { devOutbox: boolean; maxAttempts: number };
  /** One-time code and link requests (passwordless, activation, invitation resends) per window, per client IP and per identifier. */
  codeRateLimit: { perIp: number; perIdentifier: number; windowSeconds: number };
  /** SCIM service: the largest page a list answers (a larger `count` is clamped) and the body limit of SCIM requests. */
  scim: { maxResults: number; bodyLimit: number };
  /** Captcha policy: the siteverify endpoint tokens are checked against (Google reCAPTCHA's, or one speaking its protocol). */
  captcha: { verifyUrl: string };
  /**
   * RECENT_AUTH_MAX_AGE: how many seconds after a user signed in (or re-authenticated with the step-up route) the
   * session's tokens may still change who the user is (emails, password, MFA, phones, personal tokens).
   */
  recentAuthMaxAge: number;
  /** On SIGTERM, /ready answers 503 this long before the server stops accepting (a balancer's check interval). */
  drainDelayMs: number;
}

type Env = Record<string, string | undefined>;

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`invalid configuration:\n- ${problems.join('\n- ')}`);
  }
}

const PROXY_NAMES = new Set(['loopback', 'linklocal', 'uniquelocal']);

/** TRUST_PROXY: unset/false, true, a hop count, or a comma list of proxy addresses, CIDR ranges and proxy-addr names. */
function parseTrustProxy(raw: string | undefined, problems: string[]): Config['trustProxy'] {
  const v = (raw ?? '').trim();
  if (v === '' || /^(false|no|off)$/i.test(v)) return false;
  if (/^(true|yes|on)$/i.test(v)) return true;
  if (/^\d+$/.test(v)) {
    const n = Number(v);
    if (n < 1 || n > 32) problems.push(`TRUST_PROXY hop count must be from 1 to 32 (got "${raw}")`);
    return n;
  }
  const parts = v
    .split(',')
    .map((x) => x.trim())
    .filter(Boolean);
  for (const part of parts) {
    const [addr, bits, extra] = part.split('/');
    const family = isIP(addr ?? '');
    const okBits = bits === undefined || (/^\d+$/.test(bits) && Number(bits) <= (family === 6 ? 128 : 32));
    if (!(PROXY_NAMES.has(part) || (family !== 0 && okBits && extra === undefined))) {
      problems.push(
        `TRUST_PROXY must be true, false, a hop count, or a comma list of IP addresses, CIDR ranges, loopback, linklocal or uniquelocal (bad entry "${part}")`,
      );
    }
  }
  return parts;
}

export function loadConfig(env: Env = process.env): Config {
  const problems: string[] = [];
  const int = (name: string, def: number, min: number, max: number): number => {
    const raw = env[name];
    if (raw === undefined || raw === '') return def;
    const n = Number(raw);
    if (!Number.isInteger(n) || n < min || n > max) {
      problems.push(`${name} must be a whole number from ${min} to ${max} (got "${raw}")`);
      return def;
    }
    return n;
  };
  const bool = (name: string, def: boolean): boolean => {
    const raw = env[name];
    if (raw === undefined || raw === '') return def;
    if (/^(1|true|yes|on)$/i.test(raw)) return true;
    if (/^(0|false|no|off)$/i.test(raw)) return false;
    problems.push(`${name} must be true or false (got "${raw}")`);
    return def;
  };

  const port = int('PORT', 8080, 0, 65535);
  const databaseUrl = env.DATABASE_URL || undefined;
  if (databaseUrl && !/^postgres(ql)?:\/\//.test(databaseUrl))
    problems.push('DATABASE_URL must start with postgres:// or postgresql://');
  const clientId = env.GATEHOUSE_CLIENT_ID || undefined;
  const apiKey = env.GATEHOUSE_API_KEY || undefined;
  if (Boolean(clientId) !== Boolean(apiKey))
    problems.push('GATEHOUSE_CLIENT_ID and GATEHOUSE_API_KEY must be set together');
  if (apiKey && apiKey.length < 16) problems.push('GATEHOUSE_API_KEY must be at least 16 characters');
  const jwtAlgorithm = (env.JWT_ALGORITHM || 'RS256') as Config['jwtAlgorithm'];
  if (!['RS256', 'ES256', 'EdDSA'].includes(jwtAlgorithm)) problems.push('JWT_ALGORITHM must be RS256, ES256 or EdDSA');
  const publicUrl = (env.PUBLIC_URL || `http://localhost:${port}`).replace(/\/$/, '');
  if (!/^https?:\/\//.test(publicUrl)) problems.push('PUBLIC_URL must be an http(s) URL');
  const production = env.NODE_ENV === 'production';
  const webauthn = webauthnParty(publicUrl, env, problems);
  const agentServerUrl = (env.AGENT_SERVER_URL || `http://127.0.0.1:${port}`).replace(/\/$/, '');
  if (!/^https?:\/\//.test(agentServerUrl)) problems.push('AGENT_SERVER_URL must be an http(s) URL');
  const agentClientId = env.AGENT_CLIENT_ID || clientId;
  const agentApiKey = env.AGENT_API_KEY || apiKey;
  if (Boolean(env.AGENT_CLIENT_ID) !== Boolean(env.AGENT_API_KEY))
    problems.push('AGENT_CLIENT_ID and AGENT_API_KEY must be set together');

  const trustProxy = parseTrustProxy(env.TRUST_PROXY, problems);
  const captchaVerifyUrl = env.CAPTCHA_VERIFY_URL || 'https://www.google.com/recaptcha/api/siteverify';
  if (!/^https?:\/\/[^/\s]+/.test(captchaVerifyUrl))
    problems.push(`CAPTCHA_VERIFY_URL must be an http(s) URL (got "${captchaVerifyUrl}")`);
  const jobChunkSize = int('JOB_CHUNK_SIZE', 200, 1, 1000);

  const config: Config = {
    port,
    host: env.HOST || '0.0.0.0',
    agentPort: int('AGENT_PORT', 8181, 0, 65535),
    agent: {
      host: env.AGENT_HOST || env.HOST || '0.0.0.0',
      serverUrl: agentServerUrl,
      pollMs: int('AGENT_POLL_MS', 1000, 10, 3_600_000),
      snapshotFile: resolve(env.AGENT_DATA_DIR || env.DATA_DIR || './.gatehouse', 'entitlements-snapshot.json'),
      clientId: agentClientId,
      apiKey: agentApiKey,
      // Without configured credentials, the server makes a read-only one for a local agent and leaves it here.
      credentialsFile: resolve(env.DATA_DIR || './.gatehouse', 'agent-credentials.json'),
    },
    dataDir: resolve(env.DATA_DIR || './.gatehouse'),
    databaseUrl,
    clientId,
    apiKey,
    encryptionKey: env.GATEHOUSE_ENCRYPTION_KEY || undefined,
    logLevel: env.LOG_LEVEL || (env.NODE_ENV === 'test' ? 'silent' : 'info'),
    bodyLimit: int('BODY_LIMIT', 1024 * 1024, 1024, 64 * 1024 * 1024),
    trustProxy,
    jwtAlgorithm,
    publicUrl,
    webauthn,
    vendorTokenTtl: int('VENDOR_TOKEN_TTL', 86400, 60, 30 * 86400),
    signingKeysReloadMs: int('SIGNING_KEYS_RELOAD_MS', 60_000, 1, 86_400_000),
    signingKeysUnknownKidReloadMs: int('SIGNING_KEYS_UNKNOWN_KID_RELOAD_MS', 5_000, 1, 3_600_000),
    jobs: {
      enabled: bool('JOBS_ENABLED', true),
      pollMs: int('JOB_POLL_MS', 500, 10, 60000),
      leaseMs: int('JOB_LEASE_MS', 30000, 50, 3600000),
      chunkSize: jobChunkSize,
      userChunkSize: env.USER_MIGRATION_CHUNK_SIZE
        ? int('USER_MIGRATION_CHUNK_SIZE', 200, 1, 1000)
        : env.JOB_CHUNK_SIZE
          ? jobChunkSize
          : undefined,
    },
    passwordHashConcurrency: int('PASSWORD_HASH_CONCURRENCY', availableParallelism(), 1, 1024),
    accountListBroadMatches: int('ACCOUNT_LIST_BROAD_MATCHES', 2000, 1, 100_000_000),
    loginRateLimit: {
      perIp: int('LOGIN_RATE_LIMIT_PER_IP', 60, 1, 100000),
      perIdentifier: int('LOGIN_RATE_LIMIT_PER_IDENTIFIER', 20, 1, 100000),
      perIpIdentifier: int('LOGIN_RATE_LIMIT_PER_IP_IDENTIFIER', 10, 1, 100000),
      floodPerIp: int('LOGIN_FLOOD_LIMIT_PER_IP', 1200, 1, 10_000_000),
      windowSeconds: int('LOGIN_RATE_LIMIT_WINDOW', 60, 1, 86400),
    },
    production,
    outboundCaFile: env.OUTBOUND_CA_FILE || undefined,
    outbound: { allowPrivateNetworks: bool('OUTBOUND_ALLOW_PRIVATE_NETWORKS', false) },
    events: { enabled: bool('EVENTS_ENABLED', true) },
    oidcProvider: {
      enabled: bool('OIDC_PROVIDER_ENABLED', true),
      accessTokenTtl: int('OIDC_ACCESS_TOKEN_TTL', 900, 60, 86_400),
      codeTtl: int('OIDC_CODE_TTL', 60, 10, 600),
      refreshTokenTtl: int('OIDC_REFRESH_TOKEN_TTL', 14 * 86_400, 60, 365 * 86_400),
    },
    webhooks: {
      pollMs: int('WEBHOOK_POLL_MS', 500, 5, 60_000),
      timeoutMs: int('WEBHOOK_TIMEOUT_MS', 10_000, 50, 120_000),
      retryForSeconds: int('WEBHOOK_RETRY_FOR_SECONDS', 86_400, 1, 30 * 86_400),
      backoffBaseMs: int('WEBHOOK_BACKOFF_BASE_MS', 5_000, 1, 3_600_000),
      backoffMaxMs: int('WEBHOOK_BACKOFF_MAX_MS', 3_600_000, 1, 86_400_000),
      concurrency: int('WEBHOOK_CONCURRENCY', 16, 1, 256),
      // SSRF guard (docs/events.md): private, loopback, link-local and metadata addresses only when allowed; off in production.
      allowPrivateNetworks: bool('WEBHOOK_ALLOW_PRIVATE_NETWORKS', !production),
      // Outbox and delivery-log retention (days; 0 keeps forever); runs with the audit retention job.
      eventsRetentionDays: int('EVENTS_RETENTION_DAYS', 30, 0, 36_500),
    },
    audit: {
      enabled: bool('AUDIT_ENABLED', true),
      retentionDays: int('AUDIT_RETENTION_DAYS', 365, 0, 36_500),
      chainBatch: int('AUDIT_CHAIN_BATCH', 1000, 1, 10_000),
    },
    codeRateLimit: {
      perIp: int('CODE_RATE_LIMIT_PER_IP', 30, 1, 1000000),
      perIdentifier: int('CODE_RATE_LIMIT_PER_IDENTIFIER', 5, 1, 1000000),
      windowSeconds: int('CODE_RATE_LIMIT_WINDOW', 600, 1, 86400),
    },
    scim: {
      maxResults: int('SCIM_MAX_RESULTS', 200, 1, 10000),
      bodyLimit: int('SCIM_BODY_LIMIT', 1024 * 1024, 1024, 64 * 1024 * 1024),
    },
    captcha: { verifyUrl: captchaVerifyUrl },
    recentAuthMaxAge: int('RECENT_AUTH_MAX_AGE', 300, 1, 86_400),
    drainDelayMs: int('DRAIN_DELAY_MS', 0, 0, 60_000),
    messaging: {
      devOutbox: bool('MESSAGING_DEV_OUTBOX', !production),
      maxAttempts: int('MESSAGING_MAX_ATTEMPTS', 5, 1, 20),
    },
  };
  if (!['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'].includes(config.logLevel)) {
    problems.push('LOG_LEVEL must be one of fatal, error, warn, info, debug, trace, silent');
  }
  if (problems.length) throw new ConfigError(problems);
  return config;
}

/** For entry points: the config, or every problem on stderr and exit code 2. */
export function loadConfigOrExit(env: Env = process.env): Config {
  try {
    return loadConfig(env);
  } catch (err) {
    if (err instanceof ConfigError) {
      console.error(err.message);
      process.exit(2);
    }
    throw err;
  }
}

/** The WebAuthn RP ID and origins; an origin must be the RP ID's host or a subdomain of it (WebAuthn's rule). */
function webauthnParty(publicUrl: string, env: Env, problems: string[]) {
  let base: URL | undefined;
  try {
    base = new URL(publicUrl);
  } catch {
    return { rpId: 'localhost', rpName: 'Gatehouse', origins: [] };
  }
  const rpId = (env.WEBAUTHN_RP_ID || base.hostname).toLowerCase();
  const origins = [base.origin];
  for (const raw of (env.WEBAUTHN_ORIGINS ?? '').split(',').map((s) => s.trim())) {
    if (!raw) continue;
    let host: string | undefined;
    try {
      const u = new URL(raw);
      if (/^https?:$/.test(u.protocol) && u.origin === raw.replace(/\/$/, '')) host = u.hostname;
    } catch {
      host = undefined;
    }
    if (!host) problems.push(`WEBAUTHN_ORIGINS: "${raw}" is not an origin (scheme://host[:port])`);
    else if (host !== rpId && !host.endsWith(`.${rpId}`))
      problems.push(`WEBAUTHN_ORIGINS: the host of "${raw}" is not ${rpId} or a subdomain of it`);
    else origins.push(new URL(raw).origin);
  }
  if (base.hostname !== rpId && !base.hostname.endsWith(`.${rpId}`))
    problems.push(`WEBAUTHN_RP_ID ${rpId} must be PUBLIC_URL's host name or a parent domain of it`);
  return { rpId, rpName: env.WEBAUTHN_RP_NAME || 'Gatehouse', origins: [...new Set(origins)] };
}
