import type { FastifyReply, FastifyRequest } from 'fastify';
import { readCookie } from '../../http/cookies.ts';
import type { Db } from '../../storage/db.ts';
import { type BrowserSession, type LoginService, REFRESH_COOKIE, refreshCookie } from '../auth/index.ts';
import type { EnvironmentService } from '../environment/index.ts';
import type { KeysService } from '../keys/index.ts';
import type { TenantsService } from '../tenants/index.ts';
import type { UsersService } from '../users/index.ts';
import { buildProvider } from './provider.ts';
import type { InteractionDetails, Provider, ProviderContext, ProviderModule } from './provider-types.ts';
import * as store from './store.ts';

/** An application as an OpenID client (the user-migration module's applications). */
export interface OpenIdClient {
  id: string;
  name: string;
  type: string;
  redirectUris: string[];
  isFirstParty: boolean;
  clientSecretHash?: string;
}

export interface OidcDeps {
  db: Db;
  /** PUBLIC_URL: the issuer of every token. */
  issuer: string;
  secureCookies: boolean;
  /** Signs the provider's cookies: derived from the KEK, the same on every instance. */
  cookieKey: string;
  keys: KeysService;
  environment: EnvironmentService;
  users: UsersService;
  tenants: Pick<TenantsService, 'get'>;
  login: LoginService;
  clients: (id: string) => Promise<OpenIdClient | undefined>;
  ttl: { accessToken: number; code: number; refreshToken: number };
}

export type OidcService = ReturnType<typeof createOidcService>;

// The link of a grant to the Gatehouse session its tokens name (`sid`), kept beside the provider's own rows.
const LINK = 'GatehouseSession';
// The browser session an interaction first saw when it had to ask for a new sign-in (prompt=login).
const SEEN = 'SessionSeen';
const INTERACTION_TTL = 3600;
// Loaded only when the provider is enabled (a variable keeps TypeScript from resolving the untyped package).
const PACKAGE = 'oidc-provider';

/**
 * The OpenID provider: an oidc-provider instance over the platform's key (rebuilt when the key rotates), the link of
 * each grant to its Gatehouse session, and the hand-over of raw requests to it.
 */
export function createOidcService(deps: OidcDeps) {
  const { db } = deps;
  const publicUrl = new URL(deps.issuer);
  type Built = { kid: string; provider: Provider; handler: ReturnType<Provider['callback']> };
  let built: Built | undefined;
  let building: Promise<Built> | undefined;

  /**
   * The raw request as the provider reads it. It builds its URLs (forms, redirects) and cookie flags from the
   * request's origin: PUBLIC_URL's, whatever the Host or X-Forwarded-* headers say; the client address is the one
   * Fastify found under TRUST_PROXY.
   */
  function rawOf(req: FastifyRequest) {
    req.raw.headers['x-forwarded-proto'] = publicUrl.protocol.slice(0, -1);
    req.raw.headers['x-forwarded-host'] = publicUrl.host;
    req.raw.headers['x-forwarded-for'] = req.ip;
    return req.raw;
  }

  const linkOf = async (grantId: string) => {
    const row = await store.find(db, LINK, grantId);
    return typeof row?.payload.sessionId === 'string' ? row.payload.sessionId : undefined;
  };

  /** RP-initiated logout also ends the Gatehouse browser session (the refresh cookie's session, and the cookie). */
  async function endGatehouseSession(ctx: ProviderContext, next: () => Promise<void>) {
    await next();
    const confirmed = ctx.oidc?.route === 'end_session_confirm' && ctx.oidc.params?.logout;
    if (!confirmed || ctx.status >= 400) return;
    const token = readCookie(ctx.get('cookie'), REFRESH_COOKIE);
    if (token) await deps.login.logout({ refreshToken: token });
    ctx.append('set-cookie', refreshCookie(null, await deps.environment.cachedSettings(), deps.secureCookies));
  }

  /**
   * A replayed code or refresh token (RFC 9700 4.14): the provider refuses it and revokes what the grant issued. Its
   * access tokens are JWTs that name a Gatehouse session, so that session ends too and they stop at once.
   */
  async function endSessionOnReplay(ctx: ProviderContext, next: () => Promise<void>) {
    if (ctx.path !== '/oidc/token') return next();
    const body = ctx.req.body ?? {};
    const kind =
      body.grant_type === 'authorization_code'
        ? 'AuthorizationCode'
        : body.grant_type === 'refresh_token'
          ? 'RefreshToken'
          : undefined;
    const id = kind === 'AuthorizationCode' ? body.code : body.refresh_token;
    const row = kind && typeof id === 'string' ? await store.find(db, kind, id) : undefined;
    const grantId = row?.consumed_at ? row.payload.grantId : undefined;
    const sid = typeof grantId === 'string' ? await linkOf(grantId) : undefined;
    await next();
    if (sid && ctx.status === 400) await deps.login.logout({ sessionId: sid });
  }

  async function build(jwk: Record<string, unknown>): Promise<Built> {
    const mod = (await import(PACKAGE)) as ProviderModule;
    const provider = buildProvider(mod, deps, jwk, linkOf);
    provider.use(endGatehouseSession);
    provider.use(endSessionOnReplay);
    return { kid: String(jwk.kid), provider, handler: provider.callback() };
  }

  async function current(): Promise<Built> {
    const jwk = await deps.keys.activePrivateJwk();
    if (built && built.kid === jwk.kid) return built;
    building ??= build(jwk).finally(() => {
      building = undefined;
    });
    const next = await building;
    built = next;
    return next;
  }

  return {
    provider: async (): Promise<Provider> => (await current()).provider,
    rawOf,
    linkOf,
    /** Points the grant's tokens at this Gatehouse session (sign-in, consent). */
    link: (grantId: string, sessionId: string) =>
      store.upsert(db, LINK, grantId, { grantId, sessionId }, deps.ttl.refreshToken),
    client: deps.clients,
    sessionSeen: async (uid: string) => {
      const row = await store.find(db, SEEN, uid);
      return typeof row?.payload.sessionId === 'string' ? row.payload.sessionId : undefined;
    },
    markSessionSeen: (uid: string, sessionId: string) => store.upsert(db, SEEN, uid, { sessionId }, INTERACTION_TTL),
    tenantName: async (tenantId: string) => (await deps.tenants.get(tenantId))?.name,
    switchAccount: (userId: string, sessionId: string, tenantId: string) =>
      deps.login.switchAccount(userId, sessionId, tenantId),
    /** The `acr` the platform gives the session's tokens (multi-factor), if any. */
    async sessionAcr(browser: BrowserSession): Promise<string | undefined> {
      const { claims } = await deps.login.reissue.sessionClaims(browser.sessionId, { userId: browser.user.id });
      return typeof claims.acr === 'string' ? claims.acr : undefined;
    },
    /** The grant of a consent step: the existing one of this user, else a new one, with what is missing added. */
    async grant(d: InteractionDetails, accountId: string): Promise<string> {
      const { Grant } = (await current()).provider;
      let grant = d.grantId ? await Grant.find(d.grantId) : undefined;
      if (!grant || grant.accountId !== accountId)
        grant = new Grant({ accountId, clientId: String(d.params.client_id) });
      const missing = d.prompt.details;
      if (missing.missingOIDCScope) grant.addOIDCScope(missing.missingOIDCScope.join(' '));
      if (missing.missingOIDCClaims) grant.addOIDCClaims(missing.missingOIDCClaims);
      for (const [indicator, scopes] of Object.entries(
        (missing.missingResourceScopes ?? {}) as Record<string, string[]>,
      ))
        grant.addResourceScope(indicator, scopes.join(' '));
      return grant.save();
    },
    browserSession: (req: FastifyRequest) =>
      deps.login.browserSession(readCookie(req.headers.cookie, REFRESH_COOKIE) || undefined, { ip: req.ip }),
    /** Whether a refresh token is one the provider issued (the platform's own go to the platform's refresh). */
    ownsRefreshToken: (token: string) => store.isRefreshToken(db, token),
    /**
     * Hands a request to the provider: the reply is hijacked, `path` (when given) replaces the URL's path, and an
     * already parsed body is passed as `req.body` (oidc-provider reads that when the stream was consumed).
     */
    async handle(req: FastifyRequest, reply: FastifyReply, path?: string, body?: Record<string, unknown>) {
      const { handler } = await current();
      reply.hijack();
      const raw = rawOf(req) as typeof req.raw & { body?: unknown };
      if (body) raw.body = body;
      if (path) raw.url = path + (raw.url?.includes('?') ? raw.url.slice(raw.url.indexOf('?')) : '');
      await new Promise<void>((resolve) => {
        reply.raw.once('close', resolve);
        handler(raw, reply.raw);
      });
    },
  };
}
