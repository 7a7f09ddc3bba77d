import { decrypt } from '../../lib/crypto.ts';
import { AppError } from '../../http/errors.ts';
import type { Db, Queryable } from '../../storage/db.ts';
import type { ClientInfo, LoginService } from '../auth/index.ts';
import { assertAllowedRedirect, type EnvironmentService } from '../environment/index.ts';
import type { SsoConfigService } from './config.service.ts';
import { flowSecrets, saveFlow, takeFlow } from './flow.ts';
import * as oidc from './oidc.ts';
import { provisionIntoAccount, type ProvisionDeps } from './provision.ts';
import {
  assertionFacts,
  assertSafeAlgorithms,
  authnContexts,
  authnRequestUrl,
  SAML_MFA_CONTEXTS,
  validateResponse,
} from './saml.ts';
import * as store from './store.ts';

export interface SsoLoginDeps extends ProvisionDeps {
  db: Db;
  kek: Buffer;
  environment: EnvironmentService;
  login: LoginService;
  configs: SsoConfigService;
  /** OUTBOUND_ALLOW_PRIVATE_NETWORKS: OIDC requests may reach private addresses (an IdP on a private network). */
  allowPrivateNetworks?: boolean;
}

export type SsoLoginService = ReturnType<typeof createSsoLoginService>;

const OIDC_MFA_ACR = new Set([
  'http://schemas.openid.net/pape/policies/2007/06/multi-factor',
  'https://refeds.org/profile/mfa',
]);
const domainOf = (email: string) => email.slice(email.lastIndexOf('@') + 1).toLowerCase();
const strings = (v: unknown): string[] => (Array.isArray(v) ? v.map(String) : typeof v === 'string' && v ? [v] : []);

/**
 * SSO sign-in: pre-login routes an email to its account's identity provider (by verified domain), the IdP answers at
 * the SAML ACS or the OIDC post-login, the user is provisioned just in time and signed in to that account.
 */
export function createSsoLoginService(deps: SsoLoginDeps) {
  const { db, kek } = deps;
  const allowPrivate = deps.allowPrivateNetworks === true;

  /** Default roles of the configuration plus every role mapped from an IdP group the user is in. */
  async function rolesFor(q: Queryable, config: store.ConfigRow, groups: string[]): Promise<string[]> {
    const ids = new Set(config.default_role_ids);
    if (groups.length)
      for (const g of await store.groupsOf(q, config.tenant_id, config.id))
        if (groups.includes(g.grp)) g.role_ids.forEach((r) => ids.add(r));
    return [...ids];
  }

  /** The IdP may assert only emails of the configuration's verified domains (unless verification is skipped). */
  async function assertDomain(q: Queryable, config: store.ConfigRow, email: string): Promise<void> {
    if (!/^[^@\s]+@[^@\s]+\.[^@\s]+$/.test(email))
      throw new AppError('SSO_INVALID_ASSERTION', 'The identity provider asserted no usable email address');
    const settings = await deps.configs.settings('domains', q);
    if (settings.skipDomainVerification) return;
    const domains = await store.domainsOf(q, config.tenant_id, config.id);
    if (!domains.some((d) => d.validated && d.domain === domainOf(email))) {
      throw new AppError(
        'SSO_DOMAIN_NOT_VERIFIED',
        `The identity provider asserted ${email}, whose domain is not a verified domain of this SSO configuration`,
      );
    }
  }

  /**
   * Provisions and signs in. `idpMfa`: the IdP says its sign-in used several factors (SAML AuthnContextClassRef, OIDC
   * amr/acr). It satisfies Gatehouse's `mfa` gate only when the configuration trusts it (`configMetadata.trustIdpMfa`,
   * default off: the account's MFA policy then applies after SSO as after a password); the tokens then carry `mfa`.
   */
  async function finish(
    tx: Queryable,
    config: store.ConfigRow,
    who: { email: string; name?: string; groups: string[]; provider: string; idpMfa: boolean },
    client: ClientInfo,
  ) {
    await assertDomain(tx, config, who.email);
    const roleIds = await rolesFor(tx, config, who.groups);
    const user = await provisionIntoAccount(tx, deps, config.tenant_id, {
      email: who.email,
      name: who.name,
      provider: who.provider,
      roleIds,
    });
    const amr = config.type === 'saml' ? ['sso', 'saml'] : ['sso'];
    const trusted = who.idpMfa && config.config_metadata.trustIdpMfa === true;
    return deps.login.signIn(tx, user, client, trusted ? [...amr, 'mfa'] : amr, {
      tenantId: config.tenant_id,
      satisfied: trusted ? ['mfa'] : [],
    });
  }

  async function allowList(): Promise<string[]> {
    return (await deps.environment.settings()).allowedRedirectUrls ?? [];
  }

  /**
   * The OIDC redirect_uri: the body's, else the environment's redirect page (`sso/v1/oidc/configurations`, when
   * active). Either must still be in allowedRedirectUrls; with neither there is nowhere to send the code.
   */
  async function oidcRedirect(fromBody: string | undefined): Promise<string> {
    if (fromBody) return assertAllowedRedirect(await allowList(), fromBody, 'redirectUri');
    const s = (await deps.configs.settings('oidc', db)) as { active?: unknown; redirectUri?: unknown };
    if (s.active === true && typeof s.redirectUri === 'string' && s.redirectUri) {
      return assertAllowedRedirect(
        await allowList(),
        s.redirectUri,
        'the OIDC redirect page (sso/v1/oidc/configurations redirectUri)',
      );
    }
    throw new AppError(
      'VALIDATION',
      'redirectUri is required for OIDC when the environment has no active OIDC redirect page ' +
        '(set one with sso/v1/oidc/configurations): the allow-listed page that receives the code and calls oidc/postlogin',
    );
  }

  return {
    /** Finds the account's IdP for an email and answers the address to send the browser to. */
    async prelogin(body: { email: string; tenantId?: string; redirectUri?: string }) {
      const email = body.email.trim().toLowerCase();
      let config: store.ConfigRow | undefined;
      if (body.tenantId) config = (await store.listConfigs(db, body.tenantId)).find((c) => c.enabled);
      else config = await store.routeDomain(db, domainOf(email));
      if (!config || (await store.isExcluded(db, config.tenant_id, email)))
        throw new AppError('SSO_NOT_CONFIGURED', `No SSO is configured for ${email}; sign in with a password`);
      const secrets = flowSecrets();
      if (config.type === 'saml') {
        const redirect = body.redirectUri
          ? assertAllowedRedirect(await allowList(), body.redirectUri, 'redirectUri')
          : undefined;
        const sp = await deps.configs.spSide(config.tenant_id, config);
        const { url, requestId } = await authnRequestUrl(
          sp,
          {
            ssoUrl: config.sso_endpoint,
            entityId: config.idp_entity_id,
            certs: config.idp_certs,
            signRequest: config.sign_request,
          },
          secrets.state,
        );
        await saveFlow(db, kek, secrets, {
          kind: 'saml',
          tenantId: config.tenant_id,
          configId: config.id,
          requestId,
          appRedirect: redirect,
        });
        return { address: url, type: 'saml', idpType: 'saml', tenantId: config.tenant_id };
      }
      const redirect = await oidcRedirect(body.redirectUri);
      const c = await oidc.discover(
        config.oidc_issuer,
        config.oidc_client_id,
        config.oidc_secret_enc ? decrypt(kek, config.oidc_secret_enc) : '',
        allowPrivate,
      );
      const address = oidc.authorizationUrl(c, {
        redirectUri: redirect,
        scope: config.oidc_scopes,
        state: secrets.state,
        nonce: secrets.nonce,
        codeChallenge: secrets.codeChallenge,
      });
      await saveFlow(db, kek, secrets, {
        kind: 'oidc',
        tenantId: config.tenant_id,
        configId: config.id,
        redirectUri: redirect,
      });
      return { address, type: 'oidc', idpType: 'oidc', tenantId: config.tenant_id };
    },

    /**
     * The SAML ACS (HTTP-POST binding). Order: algorithm allow-list, assertion replay, state (single use, bound to
     * the AuthnRequest id), node-saml verification (signature, audience, conditions with clock skew, InResponseTo).
     */
    async samlPostLogin(body: { SAMLResponse: string; RelayState?: string }, client: ClientInfo) {
      let xml: string;
      try {
        xml = Buffer.from(body.SAMLResponse, 'base64').toString('utf8');
      } catch {
        throw new AppError('SSO_INVALID_ASSERTION', 'SAMLResponse must be base64');
      }
      if (!xml.includes('<'))
        throw new AppError('SSO_INVALID_ASSERTION', 'SAMLResponse must be a base64-encoded SAML Response');
      assertSafeAlgorithms(xml);
      const facts = assertionFacts(xml);
      if (await store.assertionSeen(db, facts.id))
        throw new AppError('SSO_ASSERTION_REPLAYED', `Assertion ${facts.id} was already used`);
      // The state is consumed on its own: a failed attempt burns it too.
      const flow = await takeFlow(db, kek, body.RelayState, 'saml');
      return db.transaction(async (tx) => {
        const config = await deps.configs.requireConfig(tx, flow.tenant_id!, flow.config_id!);
        if (!config.enabled) throw new AppError('SSO_NOT_CONFIGURED', 'This SSO configuration is disabled');
        const sp = await deps.configs.spSide(config.tenant_id, config, tx);
        const profile = await validateResponse(
          sp,
          {
            ssoUrl: config.sso_endpoint,
            entityId: config.idp_entity_id,
            certs: config.idp_certs,
            signRequest: config.sign_request,
          },
          body.SAMLResponse,
          flow.request_id ?? '',
        );
        if (!(await store.rememberAssertion(tx, facts.id, config.tenant_id, facts.notOnOrAfter)))
          throw new AppError('SSO_ASSERTION_REPLAYED', `Assertion ${facts.id} was already used`);
        const email = String(
          profile.email ?? profile.mail ?? profile['urn:oid:0.9.2342.19200300.100.1.3'] ?? profile.nameID ?? '',
        ).toLowerCase();
        const name =
          [profile.firstName ?? profile.givenName, profile.lastName ?? profile.surname].filter(Boolean).join(' ') ||
          String(profile.name ?? profile.displayName ?? '');
        const idpMfa = authnContexts(profile).some((c) => SAML_MFA_CONTEXTS.has(c));
        const response = await finish(
          tx,
          config,
          { email, name, groups: strings(profile[config.group_attribute]), provider: 'saml', idpMfa },
          client,
        );
        return { response, appRedirect: flow.app_redirect };
      });
    },

    /** The OIDC post-login: code + state from the allow-listed redirect page. */
    async oidcPostLogin(body: { code: string; state: string; iss?: string }, client: ClientInfo) {
      const flow = await takeFlow(db, kek, body.state, 'oidc');
      return db.transaction(async (tx) => {
        const config = await deps.configs.requireConfig(tx, flow.tenant_id!, flow.config_id!);
        if (!config.enabled) throw new AppError('SSO_NOT_CONFIGURED', 'This SSO configuration is disabled');
        const c = await oidc.discover(
          config.oidc_issuer,
          config.oidc_client_id,
          config.oidc_secret_enc ? decrypt(kek, config.oidc_secret_enc) : '',
          allowPrivate,
        );
        const claims = await oidc.finish(c, {
          redirectUri: flow.redirect_uri!,
          code: body.code,
          state: body.state,
          iss: body.iss,
          codeVerifier: flow.codeVerifier,
          nonce: flow.nonce!,
        });
        if (claims.email_verified === false)
          throw new AppError('SSO_INVALID_ASSERTION', 'The OpenID provider marks the email as not verified');
        const provider = typeof config.config_metadata.provider === 'string' ? config.config_metadata.provider : 'oidc';
        // RFC 8176 `mfa` in amr, or an acr naming multi-factor (OpenID PAPE, REFEDS MFA).
        const idpMfa = strings(claims.amr).includes('mfa') || OIDC_MFA_ACR.has(String(claims.acr ?? ''));
        const response = await finish(
          tx,
          config,
          {
            email: String(claims.email ?? '').toLowerCase(),
            name: typeof claims.name === 'string' ? claims.name : undefined,
            groups: strings(claims[config.group_attribute]),
            provider,
            idpMfa,
          },
          client,
        );
        return { response };
      });
    },
  };
}
