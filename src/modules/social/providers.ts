import { AppError } from '../../http/errors.ts';

/**
 * The social providers: their real endpoints (each overridable per configuration in `urls`, so a site can use a
 * regional host and tests can use local servers), default scopes, and how their answers map to a profile.
 * `oidc` providers get a nonce, and their code exchange goes through openid-client: the ID token's signature (the
 * issuer's JWKS), `iss`, `aud`, expiry and `nonce` are verified.
 */
export interface Endpoints {
  authorizationUrl: string;
  tokenUrl: string;
  userInfoUrl?: string;
  emailsUrl?: string;
  /** OpenID providers: the ID token's `iss` (Entra's `{tenantid}` template is filled from the token's `tid`). */
  issuer?: string;
  /** OpenID providers: the keys that sign ID tokens; without it a custom provider's discovery document names them. */
  jwksUrl?: string;
}

export interface SocialProfile {
  id: string;
  email: string;
  emailVerified: boolean;
  name?: string;
  picture?: string;
}

export interface ProfileInput {
  accessToken: string;
  idClaims?: Record<string, unknown>;
  urls: Endpoints;
  getJson: (url: string, accessToken: string) => Promise<Record<string, unknown> | unknown[]>;
}

export interface ProviderDef {
  oidc: boolean;
  endpoints: Endpoints;
  scopes: string;
  /** Extra authorization parameters (e.g. Apple's response_mode). */
  authParams?: Record<string, string>;
  profile: (p: ProfileInput) => Promise<SocialProfile>;
}

const str = (v: unknown) => (typeof v === 'string' && v ? v : undefined);
const truthy = (v: unknown) => v === true || v === 'true';

function fromClaims(c: Record<string, unknown>, verified: boolean): SocialProfile {
  const id = str(c.sub) ?? (c.id !== undefined ? String(c.id) : undefined);
  if (!id) throw new AppError('SOCIAL_LOGIN_REFUSED', 'The provider answered no subject id');
  return {
    id,
    email: (str(c.email) ?? '').toLowerCase(),
    emailVerified: verified,
    name: str(c.name),
    picture: str(c.picture),
  };
}

async function userInfo(p: ProfileInput): Promise<Record<string, unknown>> {
  const info = (await p.getJson(p.urls.userInfoUrl!, p.accessToken)) as Record<string, unknown>;
  if (p.idClaims?.sub && info.sub && info.sub !== p.idClaims.sub)
    throw new AppError('SOCIAL_LOGIN_REFUSED', 'userinfo answered another subject than the ID token');
  return info;
}

export const PROVIDERS: Record<string, ProviderDef> = {
  google: {
    oidc: true,
    endpoints: {
      authorizationUrl: 'https://accounts.google.com/o/oauth2/v2/auth',
      tokenUrl: 'https://oauth2.googleapis.com/token',
      userInfoUrl: 'https://openidconnect.googleapis.com/v1/userinfo',
      issuer: 'https://accounts.google.com',
      jwksUrl: 'https://www.googleapis.com/oauth2/v3/certs',
    },
    scopes: 'openid email profile',
    profile: async (p) => {
      const c = await userInfo(p);
      return fromClaims(c, truthy(c.email_verified));
    },
  },
  microsoft: {
    oidc: true,
    endpoints: {
      authorizationUrl: 'https://login.microsoftonline.com/common/oauth2/v2.0/authorize',
      tokenUrl: 'https://login.microsoftonline.com/common/oauth2/v2.0/token',
      userInfoUrl: 'https://graph.microsoft.com/oidc/userinfo',
      issuer: 'https://login.microsoftonline.com/{tenantid}/v2.0',
      jwksUrl: 'https://login.microsoftonline.com/common/discovery/v2.0/keys',
    },
    scopes: 'openid email profile',
    // Entra ID does not vouch for `email` unless the ID token says the domain owner verified it (xms_edov).
    profile: async (p) => {
      const c = await userInfo(p);
      return fromClaims(c, truthy(p.idClaims?.xms_edov) || truthy(p.idClaims?.email_verified));
    },
  },
  slack: {
    oidc: true,
    endpoints: {
      authorizationUrl: 'https://slack.com/openid/connect/authorize',
      tokenUrl: 'https://slack.com/api/openid.connect.token',
      userInfoUrl: 'https://slack.com/api/openid.connect.userInfo',
      issuer: 'https://slack.com',
      jwksUrl: 'https://slack.com/openid/connect/keys',
    },
    scopes: 'openid email profile',
    profile: async (p) => {
      const c = await userInfo(p);
      if (c.ok === false) throw new AppError('SOCIAL_LOGIN_REFUSED', `Slack userInfo answered ${String(c.error)}`);
      return fromClaims(c, truthy(c.email_verified));
    },
  },
  apple: {
    oidc: true,
    endpoints: {
      authorizationUrl: 'https://appleid.apple.com/auth/authorize',
      tokenUrl: 'https://appleid.apple.com/auth/token',
      issuer: 'https://appleid.apple.com',
      jwksUrl: 'https://appleid.apple.com/auth/keys',
    },
    scopes: 'name email',
    authParams: { response_mode: 'form_post' },
    profile: async (p) => {
      if (!p.idClaims) throw new AppError('SOCIAL_LOGIN_REFUSED', 'Apple answered no ID token');
      return fromClaims(p.idClaims, truthy(p.idClaims.email_verified));
    },
  },
  github: {
    oidc: false,
    endpoints: {
      authorizationUrl: 'https://github.com/login/oauth/authorize',
      tokenUrl: 'https://github.com/login/oauth/access_token',
      userInfoUrl: 'https://api.github.com/user',
      emailsUrl: 'https://api.github.com/user/emails',
    },
    scopes: 'read:user user:email',
    // The profile email may be unverified or hidden: the verified one comes from /user/emails (primary first).
    profile: async (p) => {
      const u = (await p.getJson(p.urls.userInfoUrl!, p.accessToken)) as Record<string, unknown>;
      const emails = (await p.getJson(p.urls.emailsUrl!, p.accessToken)) as {
        email: string;
        primary?: boolean;
        verified?: boolean;
      }[];
      const list = Array.isArray(emails) ? emails : [];
      const pick = list.find((e) => e.primary && e.verified) ?? list.find((e) => e.verified);
      if (u.id === undefined) throw new AppError('SOCIAL_LOGIN_REFUSED', 'GitHub answered no user id');
      return {
        id: String(u.id),
        email: (pick?.email ?? str(u.email) ?? '').toLowerCase(),
        emailVerified: Boolean(pick),
        name: str(u.name) ?? str(u.login),
        picture: str(u.avatar_url),
      };
    },
  },
  facebook: {
    oidc: false,
    endpoints: {
      authorizationUrl: 'https://www.facebook.com/v19.0/dialog/oauth',
      tokenUrl: 'https://graph.facebook.com/v19.0/oauth/access_token',
      userInfoUrl: 'https://graph.facebook.com/me?fields=id,name,email,picture',
    },
    scopes: 'email public_profile',
    // Graph answers `email` only when the person confirmed it with Facebook.
    profile: async (p) => {
      const u = (await p.getJson(p.urls.userInfoUrl!, p.accessToken)) as Record<string, unknown>;
      const pic = (u.picture as { data?: { url?: string } } | undefined)?.data?.url;
      return { ...fromClaims({ ...u, picture: pic }, Boolean(str(u.email))) };
    },
  },
};

/** A custom OAuth 2.0 / OIDC provider: profile from userinfo (`sub` or `id`); email verified only when it says so. */
export function customDef(urls: Endpoints, scopes: string): ProviderDef {
  return {
    oidc: scopes.split(/\s+/).includes('openid'),
    endpoints: urls,
    scopes,
    profile: async (p) => {
      const c = p.urls.userInfoUrl ? await userInfo(p) : (p.idClaims ?? {});
      return fromClaims(c, truthy(c.email_verified));
    },
  };
}
