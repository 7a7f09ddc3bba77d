import { importPKCS8, SignJWT } from 'jose';
import { decrypt, encrypt, newId } from '../../lib/crypto.ts';
import { isUuid } from '../../lib/pg-errors.ts';
import { AppError } from '../../http/errors.ts';
import type { Db, Queryable } from '../../storage/db.ts';
import type { ClientInfo, LoginService } from '../auth/index.ts';
import { assertAllowedRedirect, type EnvironmentService } from '../environment/index.ts';
import type { EventsService } from '../events/index.ts';
import type { RolesService } from '../roles/index.ts';
import type { TenantsService } from '../tenants/index.ts';
import { activateByIdentityProvider } from '../signup/index.ts';
import { findByEmail, findById, isLockedNow, updateUser } from '../users/index.ts';
import { flowSecrets, provisionIntoAccount, saveFlow, takeFlow } from '../sso/index.ts';
import { customDef, PROVIDERS, type Endpoints, type ProviderDef } from './providers.ts';
import { exchangeCode } from './openid.ts';
import * as store from './store.ts';

export interface SocialDeps {
  db: Db;
  kek: Buffer;
  environment: EnvironmentService;
  login: LoginService;
  roles: RolesService;
  tenants: TenantsService;
  events: EventsService;
  fetch?: typeof fetch;
  domainCheck?: (q: Queryable, tenantId: string, email: string) => Promise<void>;
}

export interface SocialBody {
  type?: string;
  clientId?: string;
  secret?: string;
  redirectUrl?: string;
  active?: boolean;
  scopes?: string;
  additionalScopes?: string[];
  authorizationUrl?: string;
  tokenUrl?: string;
  userInfoUrl?: string;
  emailsUrl?: string;
  /** OpenID providers: the ID token issuer and the keys that sign it (defaults: the provider's own). */
  issuer?: string;
  jwksUrl?: string;
  ssoLogoUrl?: string;
  displayName?: string;
  /** Apple: the team id and key id of the .p8 key given as `secret`. */
  teamId?: string;
  keyId?: string;
  /** Create users who are not known yet even when the environment's allowSignups is off. */
  allowSignups?: boolean;
}

export type SocialService = ReturnType<typeof createSocialService>;

const URL_KEYS = ['authorizationUrl', 'tokenUrl', 'userInfoUrl', 'emailsUrl', 'issuer', 'jwksUrl'] as const;

/** Social login: provider configurations (secrets sealed with the KEK) and the OAuth 2.0 / OIDC sign-in. */
export function createSocialService(deps: SocialDeps) {
  const { db, kek } = deps;
  const http = deps.fetch ?? fetch;

  const view = (r: store.SocialRow) => {
    const def = r.custom ? undefined : PROVIDERS[r.type];
    const urls = { ...def?.endpoints, ...(r.options.urls as Partial<Endpoints>) };
    return {
      id: r.id,
      type: r.type,
      active: r.active,
      clientId: r.client_id,
      redirectUrl: r.redirect_url,
      scopes: r.scopes || def?.scopes || '',
      authorizationUrl: urls.authorizationUrl ?? '',
      tokenUrl: urls.tokenUrl ?? '',
      userInfoUrl: urls.userInfoUrl ?? '',
      issuer: urls.issuer ?? '',
      jwksUrl: urls.jwksUrl ?? '',
      displayName: String(r.options.displayName ?? r.type),
      ssoLogoUrl: String(r.options.ssoLogoUrl ?? ''),
      customised: r.custom,
      allowSignups: Boolean(r.options.allowSignups),
      createdAt: r.created_at.toISOString(),
      updatedAt: r.updated_at.toISOString(),
    };
  };

  function rowFrom(
    body: SocialBody,
    current: store.SocialRow | undefined,
    custom: boolean,
  ): Omit<store.SocialRow, 'created_at' | 'updated_at'> {
    const type = (body.type ?? current?.type ?? '').toLowerCase();
    if (!custom && !PROVIDERS[type])
      throw new AppError('VALIDATION', `type must be one of ${Object.keys(PROVIDERS).join(', ')}`);
    if (custom && (PROVIDERS[type] || !/^[a-z0-9][a-z0-9_-]{0,62}$/.test(type)))
      throw new AppError(
        'VALIDATION',
        'type of a custom provider must be a lowercase name (letters, digits, - or _) other than a built-in provider',
      );
    const options: Record<string, unknown> = { ...current?.options };
    const urls: Record<string, string> = { ...(options.urls as Record<string, string>) };
    for (const k of URL_KEYS) {
      const v = body[k];
      if (v === undefined) continue;
      if (v && !/^https?:\/\//.test(v)) throw new AppError('VALIDATION', `${k} must be an http(s) URL`);
      urls[k] = v;
    }
    options.urls = urls;
    for (const k of ['teamId', 'keyId', 'ssoLogoUrl', 'displayName', 'allowSignups'] as const)
      if (body[k] !== undefined) options[k] = body[k];
    if (custom && !(urls.authorizationUrl && urls.tokenUrl))
      throw new AppError('VALIDATION', 'a custom provider needs authorizationUrl and tokenUrl');
    const clientId = body.clientId ?? current?.client_id;
    if (!clientId) throw new AppError('VALIDATION', 'clientId is required');
    if (type === 'apple' && body.secret !== undefined && !body.secret.includes('PRIVATE KEY'))
      throw new AppError(
        'VALIDATION',
        'secret of apple must be the .p8 private key (PEM) that signs the client secret JWT',
      );
    const scopes =
      body.scopes ??
      (body.additionalScopes
        ? [PROVIDERS[type]?.scopes ?? '', ...body.additionalScopes].join(' ').trim()
        : (current?.scopes ?? ''));
    return {
      id: current?.id ?? newId(),
      type,
      custom,
      active: body.active ?? current?.active ?? true,
      client_id: clientId,
      secret_enc: body.secret ? encrypt(kek, body.secret) : null,
      redirect_url: body.redirectUrl ?? current?.redirect_url ?? '',
      scopes,
      options,
    };
  }

  async function resolve(
    q: Queryable,
    provider: string,
  ): Promise<{ row: store.SocialRow; def: ProviderDef; urls: Endpoints }> {
    const row =
      (await store.byType(q, provider.toLowerCase())) ?? (isUuid(provider) ? await store.byId(q, provider) : undefined);
    if (!row || !row.active)
      throw new AppError('SOCIAL_PROVIDER_NOT_FOUND', `Social login with ${provider} is not configured or not active`);
    const overrides = (row.options.urls ?? {}) as Partial<Endpoints>;
    const base = row.custom
      ? customDef(overrides as Endpoints, row.scopes || 'openid email profile')
      : PROVIDERS[row.type];
    const urls = {
      ...base.endpoints,
      ...Object.fromEntries(Object.entries(overrides).filter(([, v]) => v)),
    } as Endpoints;
    return { row, def: base, urls };
  }

  /** Apple's client secret: a JWT signed ES256 with the .p8 key (team id as issuer, client id as subject). */
  async function clientSecret(row: store.SocialRow, urls: Endpoints): Promise<string> {
    const secret = row.secret_enc ? decrypt(kek, row.secret_enc) : '';
    if (row.type !== 'apple') return secret;
    const key = await importPKCS8(secret, 'ES256');
    return new SignJWT({})
      .setProtectedHeader({ alg: 'ES256', kid: String(row.options.keyId ?? '') })
      .setIssuer(String(row.options.teamId ?? ''))
      .setSubject(row.client_id)
      .setAudience(new URL(urls.authorizationUrl).origin)
      .setIssuedAt()
      .setExpirationTime('5m')
      .sign(key);
  }

  async function getJson(url: string, accessToken: string): Promise<Record<string, unknown>> {
    const res = await http(url, {
      headers: { authorization: `Bearer ${accessToken}`, accept: 'application/json', 'user-agent': 'Gatehouse' },
      signal: AbortSignal.timeout(10_000),
    });
    if (!res.ok) throw new AppError('SOCIAL_LOGIN_REFUSED', `The provider's profile API answered ${res.status}`);
    return (await res.json()) as Record<string, unknown>;
  }

  /** OAuth 2.0 providers without OpenID (GitHub, Facebook, custom without `openid`): the code for an access token. */
  async function plainExchange(
    row: store.SocialRow,
    urls: Endpoints,
    secret: string,
    code: string,
    flow: { redirect_uri: string | null; codeVerifier: string },
  ): Promise<string> {
    const form = new URLSearchParams({
      grant_type: 'authorization_code',
      code,
      redirect_uri: flow.redirect_uri ?? '',
      client_id: row.client_id,
      client_secret: secret,
      code_verifier: flow.codeVerifier,
    });
    const headers = { accept: 'application/json', 'content-type': 'application/x-www-form-urlencoded' };
    const init = { method: 'POST', body: form, headers, signal: AbortSignal.timeout(10_000) };
    const res = await http(urls.tokenUrl, init).catch((err: Error) => {
      throw new AppError(
        'SSO_PROVIDER_UNAVAILABLE',
        `The token endpoint of ${row.type} could not be reached: ${err.message}`,
      );
    });
    const tokens = (await res.json().catch(() => ({}))) as Record<string, unknown>;
    if (!res.ok || typeof tokens.access_token !== 'string') {
      const why = String(tokens.error ?? res.status);
      throw new AppError('SOCIAL_LOGIN_REFUSED', `The token endpoint of ${row.type} refused the code: ${why}`);
    }
    return tokens.access_token;
  }

  async function allowList() {
    return (await deps.environment.settings()).allowedRedirectUrls ?? [];
  }

  return {
    list: async (custom?: boolean) => (await store.list(db, custom)).map(view),
    publicList: async () =>
      (await store.list(db))
        .filter((r) => r.active)
        .map(({ secret_enc: _s, ...r }) => view({ ...r, secret_enc: null })),
    async upsert(body: SocialBody) {
      const current = body.type ? await store.byType(db, body.type.toLowerCase()) : undefined;
      return view(await store.upsert(db, rowFrom(body, current, false)));
    },
    async removeBuiltIn(type: string) {
      if (!(await store.remove(db, { type: type.toLowerCase() })))
        throw new AppError('SOCIAL_PROVIDER_NOT_FOUND', `Social login ${type} is not configured`);
      return {};
    },
    async createCustom(body: SocialBody) {
      if (body.type && (await store.byType(db, body.type.toLowerCase())))
        throw new AppError('SOCIAL_PROVIDER_EXISTS', `A provider of type ${body.type} exists`);
      return view(await store.upsert(db, rowFrom(body, undefined, true)));
    },
    async updateCustom(id: string, body: SocialBody) {
      const current = isUuid(id) ? await store.byId(db, id) : undefined;
      if (!current?.custom) throw new AppError('SOCIAL_PROVIDER_NOT_FOUND', `No custom provider ${id}`);
      if (body.type && body.type.toLowerCase() !== current.type)
        throw new AppError('VALIDATION', 'type of a custom provider cannot change; delete it and create another');
      return view(await store.upsert(db, rowFrom(body, current, true)));
    },
    async removeCustom(id: string) {
      if (!(isUuid(id) && (await store.remove(db, { id }))))
        throw new AppError('SOCIAL_PROVIDER_NOT_FOUND', `No custom provider ${id}`);
      return {};
    },

    /** Starts a sign-in: state, nonce (OIDC providers) and PKCE; answers the provider's authorization URL. */
    async prelogin(provider: string, body: { redirectUri?: string }) {
      const { row, def, urls } = await resolve(db, provider);
      const redirectUri = assertAllowedRedirect(await allowList(), body.redirectUri || row.redirect_url, 'redirectUri');
      const s = flowSecrets();
      const url = new URL(urls.authorizationUrl);
      const params: Record<string, string> = {
        response_type: 'code',
        client_id: row.client_id,
        redirect_uri: redirectUri,
        scope: row.scopes || def.scopes,
        state: s.state,
        code_challenge: s.codeChallenge,
        code_challenge_method: 'S256',
        ...def.authParams,
      };
      if (def.oidc) params.nonce = s.nonce;
      for (const [k, v] of Object.entries(params)) url.searchParams.set(k, v);
      await saveFlow(db, kek, s, { kind: 'social', provider: row.type, redirectUri });
      return { address: url.href };
    },

    /** Finishes a sign-in: code exchange with the PKCE verifier, ID token checks, profile, link or create, sign in. */
    async postlogin(provider: string, body: { code?: string; state?: string }, client: ClientInfo) {
      const { row, def, urls } = await resolve(db, provider);
      const flow = await takeFlow(db, kek, body.state, 'social');
      if (flow.provider !== row.type)
        throw new AppError('SSO_STATE_INVALID', 'state belongs to a sign-in with another provider');
      if (!body.code) throw new AppError('VALIDATION', 'code is required');
      const secret = await clientSecret(row, urls);
      let accessToken: string;
      let idClaims: Record<string, unknown> | undefined;
      if (def.oidc) {
        const done = await exchangeCode({
          clientId: row.client_id,
          clientSecret: secret,
          urls,
          redirectUri: flow.redirect_uri ?? '',
          code: body.code,
          state: body.state!,
          nonce: flow.nonce!,
          codeVerifier: flow.codeVerifier,
          fetch: http,
        });
        accessToken = done.accessToken;
        idClaims = done.claims;
      } else {
        accessToken = await plainExchange(row, urls, secret, body.code, flow);
      }
      const profile = await def.profile({ accessToken, idClaims, urls, getJson });
      const amr = ['social', row.type];
      return db.transaction(async (tx) => {
        // The provider's subject id names the user from the second sign-in on, whatever email the provider gives now.
        const linked = await store.touchIdentity(tx, row.type, profile.id, profile.email);
        if (linked) {
          const user = await findById(tx, linked.user_id);
          if (!user) throw new AppError('SOCIAL_LOGIN_REFUSED', 'The linked user no longer exists');
          if (isLockedNow(user)) throw new AppError('USER_LOCKED');
          return deps.login.signIn(tx, user, client, amr);
        }
        if (!profile.email) {
          throw new AppError('SOCIAL_EMAIL_UNVERIFIED', `${row.type} gave no email address; sign in another way`);
        }
        let known = await findByEmail(tx, profile.email);
        if (known) {
          // Only the provider's word that the address is this person's may reach an existing user.
          if (!profile.emailVerified) {
            const why = `${row.type} did not vouch for ${profile.email}, which is an existing user's; sign in another way`;
            throw new AppError('SOCIAL_EMAIL_UNVERIFIED', why);
          }
          // Linking by verified email, once: the provider vouched for this address, so it is this user. A user already
          // linked to another subject of this provider is not linked again by email (a recycled address at the
          // provider must not reach the account).
          if (isLockedNow(known)) throw new AppError('USER_LOCKED');
          if (!(await store.linkIdentity(tx, row.type, profile.id, known.id, profile.email))) {
            throw new AppError(
              'SOCIAL_IDENTITY_CONFLICT',
              `${profile.email} is linked to another ${row.type} account; sign in with that one`,
            );
          }
          known = await activateByIdentityProvider(tx, deps.events, known, row.type);
          if (!known.verified) {
            // Links made while the address was unproven (a sign-up through a provider that did not vouch for it) go:
            // whoever made them must not keep a way into the account its owner now proves.
            await store.unlinkOthers(tx, known.id, row.type);
            await updateUser(tx, known.id, { verified: true });
            known = { ...known, verified: true };
          }
          return deps.login.signIn(tx, known, client, amr);
        }
        const allow = (await deps.environment.settings(tx)).allowSignups || Boolean(row.options.allowSignups);
        if (!allow)
          throw new AppError(
            'SOCIAL_SIGNUP_DISABLED',
            `No user has the email ${profile.email} and sign-up is disabled`,
          );
        const account = await deps.tenants.create({ name: profile.name || profile.email }, tx);
        const roleIds = await deps.roles.firstUserRoleIds(tx, account.tenantId);
        // A provider that does not vouch for the address still makes a user, unverified (as a password sign-up is).
        const user = await provisionIntoAccount(tx, deps, account.tenantId, {
          email: profile.email,
          name: profile.name,
          picture: profile.picture,
          provider: row.type,
          roleIds,
          verified: profile.emailVerified,
          source: 'social',
        });
        await store.linkIdentity(tx, row.type, profile.id, user.id, profile.email);
        return deps.login.signIn(tx, user, client, amr, { tenantId: account.tenantId });
      });
    },
  };
}
