import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { Type, type Static } from 'typebox';
import { accountOf, guard } from '../../http/auth.ts';
import { REFRESH_COOKIE, SignInAnswer, type SignInAnswerBody } from '../auth/index.ts';
import type { EnvironmentService } from '../environment/index.ts';
import { grantorOf } from '../roles/index.ts';
import type { SsoConfigService } from './config.service.ts';
import type { SsoLoginService } from './login.service.ts';
import * as S from './schema.ts';
import { ssoCompatRoutes } from './compat.routes.ts';

export interface SsoRouteDeps {
  configs: SsoConfigService;
  sso: SsoLoginService;
  environment: EnvironmentService;
  secureCookies: boolean;
}

const tags = ['sso'];
const READ = guard.any('fe.secure.read.samlConfiguration');
const WRITE = guard.any('fe.secure.write.samlConfiguration');
const PREFIXES = ['/team/resources/sso', '/identity/resources/sso'];

/** Parses HTML form posts (the SAML HTTP-POST binding, Apple's form_post) for the routes of this plugin only. */
export function acceptForms(app: Parameters<FastifyPluginAsyncTypebox>[0]) {
  app.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string' }, (_req, body, done) => {
    done(null, Object.fromEntries(new URLSearchParams(body as string)));
  });
}

/** Sets the refresh cookie as the password sign-in does (wire.md section 3). */
export async function refreshCookie(
  reply: FastifyReply,
  environment: EnvironmentService,
  secure: boolean,
  token: string,
) {
  const s = await environment.settings();
  const sameSite = s.cookieSameSite === 'NONE' ? 'None' : s.cookieSameSite === 'STRICT' ? 'Strict' : 'Lax';
  reply.header(
    'set-cookie',
    `${REFRESH_COOKIE}=${encodeURIComponent(token)}; Path=/; HttpOnly; SameSite=${sameSite}; Max-Age=${s.defaultRefreshTokenExpiration}${secure || sameSite === 'None' ? '; Secure' : ''}`,
  );
}

export const ssoRoutes: FastifyPluginAsyncTypebox<SsoRouteDeps> = async (app, deps) => {
  const { configs, sso } = deps;
  acceptForms(app);
  await app.register(ssoCompatRoutes, deps);
  const client = (req: FastifyRequest) => ({
    ip: req.ip,
    userAgent: req.headers['user-agent'],
    cookie: req.headers.cookie,
  });

  for (const P of PREFIXES) {
    const C = `${P}/v1/configurations`;
    app.get(
      C,
      {
        config: READ,
        schema: { tags, summary: 'SSO configurations of the account', response: { 200: Type.Array(S.Configuration) } },
      },
      async (req) => configs.list(accountOf(req)),
    );
    app.post(
      C,
      {
        config: WRITE,
        schema: {
          tags,
          summary: 'Create an SSO configuration (SAML or OIDC)',
          body: S.ConfigBody,
          response: { 201: S.Configuration },
        },
      },
      async (req, reply) =>
        reply.status(201).send(await configs.create(accountOf(req), req.body, grantorOf(req.auth!))),
    );
    app.patch(
      `${C}/:configurationId`,
      {
        config: WRITE,
        schema: {
          tags,
          summary: 'Update an SSO configuration',
          params: S.ConfigParams,
          body: S.ConfigBody,
          response: { 200: S.Configuration },
        },
      },
      async (req) => configs.update(accountOf(req), req.params.configurationId, req.body, grantorOf(req.auth!)),
    );
    app.delete(
      `${C}/:configurationId`,
      {
        config: WRITE,
        schema: { tags, summary: 'Delete an SSO configuration', params: S.ConfigParams, response: { 200: S.Empty } },
      },
      async (req) => configs.remove(accountOf(req), req.params.configurationId),
    );
    app.post(
      `${C}/metadata`,
      {
        config: WRITE,
        schema: {
          tags,
          summary: 'Create a SAML configuration from IdP metadata XML',
          body: S.MetadataBody,
          response: { 201: S.Configuration },
        },
      },
      async (req, reply) => reply.status(201).send(await configs.createFromMetadata(accountOf(req), req.body.metadata)),
    );
    app.put(
      `${C}/:configurationId/metadata`,
      {
        config: WRITE,
        schema: {
          tags,
          summary: 'Replace the IdP side of a SAML configuration from metadata XML',
          params: S.ConfigParams,
          body: S.MetadataBody,
          response: { 200: S.Configuration },
        },
      },
      async (req) => configs.updateFromMetadata(accountOf(req), req.params.configurationId, req.body.metadata),
    );
    app.post(
      `${C}/metadata-url`,
      {
        config: WRITE,
        schema: {
          tags,
          summary: 'Create a SAML configuration from IdP metadata fetched by URL',
          body: S.MetadataUrlBody,
          response: { 201: S.Configuration },
        },
      },
      async (req, reply) =>
        reply
          .status(201)
          .send(await configs.createFromMetadataUrl(accountOf(req), req.body.url, req.body.configMetadata)),
    );
    app.put(
      `${C}/:configurationId/metadata-url`,
      {
        config: WRITE,
        schema: {
          tags,
          summary: 'Refresh a SAML configuration from IdP metadata fetched by URL',
          params: S.ConfigParams,
          body: S.MetadataUrlBody,
          response: { 200: S.Configuration },
        },
      },
      async (req) => configs.updateFromMetadataUrl(accountOf(req), req.params.configurationId, req.body.url),
    );

    app.post(
      `${C}/:configurationId/domains`,
      {
        config: WRITE,
        schema: {
          tags,
          summary: 'Claim an email domain (answers the DNS TXT record to publish)',
          params: S.ConfigParams,
          body: S.DomainBody,
          response: { 201: S.Domain },
        },
      },
      async (req, reply) =>
        reply.status(201).send(await configs.addDomain(accountOf(req), req.params.configurationId, req.body.domain)),
    );
    app.delete(
      `${C}/:configurationId/domains/:domainId`,
      {
        config: WRITE,
        schema: { tags, summary: 'Remove a claimed domain', params: S.DomainParams, response: { 200: S.Empty } },
      },
      async (req) => configs.removeDomain(accountOf(req), req.params.configurationId, req.params.domainId),
    );
    for (const path of [
      `${P}/v2/configurations/:configurationId/domains/:domainId/validate`,
      `${C}/:configurationId/domains/:domainId/validate`,
    ]) {
      app.put(
        path,
        {
          config: WRITE,
          schema: {
            tags,
            summary: 'Validate a domain by its DNS TXT record',
            params: S.DomainParams,
            response: { 200: S.Domain },
          },
        },
        async (req) => configs.validateDomain(accountOf(req), req.params.configurationId, req.params.domainId),
      );
    }
    app.put(
      `${C}/:configurationId/domains/:domainId/validate/email`,
      {
        config: WRITE,
        schema: {
          tags,
          summary: 'Validate a domain by email (not offered: use DNS, or the vendor confirms it)',
          params: S.DomainParams,
          response: { 200: S.Domain },
        },
      },
      async (req) => configs.validateDomain(accountOf(req), req.params.configurationId, req.params.domainId),
    );
    app.put(
      `${C}/domains/:domain/force-validate`,
      {
        config: guard.vendor,
        schema: {
          tags,
          summary: 'Vendor only: confirm a claimed domain without DNS',
          params: Type.Object({ domain: Type.String({ maxLength: 253 }) }),
          response: { 200: S.Domain },
        },
      },
      async (req) => configs.forceValidate(req.params.domain),
    );

    app.put(
      `${C}/:configurationId/roles`,
      {
        config: WRITE,
        schema: {
          tags,
          summary: 'Default roles of users provisioned by this IdP',
          params: S.ConfigParams,
          body: S.RolesBody,
          response: { 201: S.RoleIdsAnswer },
        },
      },
      async (req, reply) =>
        reply
          .status(201)
          .send(
            await configs.setDefaultRoles(
              accountOf(req),
              req.params.configurationId,
              req.body.roleIds,
              grantorOf(req.auth!),
            ),
          ),
    );
    app.get(
      `${C}/:configurationId/roles`,
      {
        config: READ,
        schema: {
          tags,
          summary: 'Default roles of users provisioned by this IdP',
          params: S.ConfigParams,
          response: { 200: S.RoleIdsAnswer },
        },
      },
      async (req) => configs.defaultRoles(accountOf(req), req.params.configurationId),
    );
    app.post(
      `${C}/:configurationId/groups`,
      {
        config: WRITE,
        schema: {
          tags,
          summary: 'Map an IdP group to roles',
          params: S.ConfigParams,
          body: S.GroupBody,
          response: { 201: S.Group },
        },
      },
      async (req, reply) =>
        reply
          .status(201)
          .send(
            await configs.addGroup(
              accountOf(req),
              req.params.configurationId,
              req.body.group,
              req.body.roleIds,
              grantorOf(req.auth!),
            ),
          ),
    );
    app.get(
      `${C}/:configurationId/groups`,
      {
        config: READ,
        schema: { tags, summary: 'IdP group mappings', params: S.ConfigParams, response: { 200: Type.Array(S.Group) } },
      },
      async (req) => configs.groups(accountOf(req), req.params.configurationId),
    );
    app.patch(
      `${C}/:configurationId/groups/:groupId`,
      {
        config: WRITE,
        schema: {
          tags,
          summary: 'Change an IdP group mapping',
          params: S.GroupParams,
          body: S.GroupBody,
          response: { 200: S.Group },
        },
      },
      async (req) =>
        configs.updateGroup(
          accountOf(req),
          req.params.configurationId,
          req.params.groupId,
          req.body.group,
          req.body.roleIds,
          grantorOf(req.auth!),
        ),
    );
    app.delete(
      `${C}/:configurationId/groups/:groupId`,
      {
        config: WRITE,
        schema: { tags, summary: 'Remove an IdP group mapping', params: S.GroupParams, response: { 200: S.Empty } },
      },
      async (req) => configs.removeGroup(accountOf(req), req.params.configurationId, req.params.groupId),
    );

    app.post(
      `${C}/excluded-emails`,
      {
        config: WRITE,
        schema: {
          tags,
          summary: 'Let an email sign in with a password despite SSO',
          body: S.EmailBody,
          response: { 201: S.ExcludedEmail },
        },
      },
      async (req, reply) => reply.status(201).send(await configs.exclude(accountOf(req), req.body.email)),
    );
    app.get(
      `${C}/excluded-emails`,
      { config: READ, schema: { tags, summary: 'Emails excluded from SSO', response: { 200: S.ExcludedEmails } } },
      async (req) => configs.excluded(accountOf(req)),
    );
    app.delete(
      `${C}/excluded-emails/:email`,
      {
        config: WRITE,
        schema: {
          tags,
          summary: 'Remove an SSO exclusion',
          params: Type.Object({ email: Type.String({ maxLength: 320 }) }),
          response: { 200: S.Empty },
        },
      },
      async (req) => configs.unexclude(accountOf(req), req.params.email),
    );
    app.put(
      `${C}/domains`,
      {
        config: guard.vendor,
        schema: {
          tags,
          summary: 'SSO domains policy of the environment',
          body: S.DomainsSettings,
          response: { 201: S.DomainsSettings },
        },
      },
      async (req, reply) =>
        reply.status(201).send((await configs.setSettings('domains', req.body)) as Static<typeof S.DomainsSettings>),
    );
    app.get(
      `${C}/domains`,
      {
        config: guard.vendor,
        schema: { tags, summary: 'SSO domains policy of the environment', response: { 200: S.DomainsSettings } },
      },
      async () => (await configs.settings('domains')) as Static<typeof S.DomainsSettings>,
    );
    app.put(
      `${C}/multiple-sso-per-domain`,
      {
        config: guard.vendor,
        schema: {
          tags,
          summary: 'SSO per account configuration',
          body: S.MultipleSsoSettings,
          response: { 201: S.MultipleSsoSettings },
        },
      },
      async (req, reply) =>
        reply
          .status(201)
          .send((await configs.setSettings('multipleSso', req.body)) as Static<typeof S.MultipleSsoSettings>),
    );
    app.get(
      `${C}/multiple-sso-per-domain`,
      {
        config: guard.vendor,
        schema: { tags, summary: 'SSO per account configuration', response: { 200: S.MultipleSsoSettings } },
      },
      async () => (await configs.settings('multipleSso')) as Static<typeof S.MultipleSsoSettings>,
    );

    const SAML = `${P}/v1/saml/configurations`;
    app.get(
      `${SAML}/sp-metadata`,
      {
        config: guard.public,
        schema: {
          tags,
          summary: 'SAML service-provider metadata of an account (tenant header or ?tenantId)',
          querystring: Type.Object({ tenantId: Type.Optional(Type.String({ maxLength: 255 })) }),
          response: { 200: S.SpMetadataXml },
        },
      },
      async (req, reply) => {
        const tenantId = req.query.tenantId ?? accountOf(req);
        return reply.type('application/samlmetadata+xml').send(await configs.spMetadataXml(tenantId));
      },
    );
    app.get(
      `${SAML}/sp-certificate`,
      {
        config: guard.public,
        schema: { tags, summary: 'The SAML service-provider signing certificate', response: { 200: S.SpCertificate } },
      },
      async () => configs.spCertificate(),
    );
    app.get(
      `${SAML}/vendor-config`,
      {
        config: guard.vendor,
        schema: {
          tags,
          summary: "The environment's SAML service-provider settings",
          response: { 200: S.VendorSamlConfig },
        },
      },
      async () => configs.vendorConfig(),
    );
    app.get(
      SAML,
      {
        config: READ,
        schema: {
          tags,
          summary: 'The SAML configuration of the account',
          response: { 200: S.SamlConfigurationAnswer },
        },
      },
      async (req) => configs.samlOf(accountOf(req)),
    );
  }

  const A = '/identity/resources/auth';
  const prelogin = {
    config: guard.public,
    schema: {
      tags: ['sso sign-in'],
      summary: "Route an email to its account's identity provider",
      body: S.PreloginBody,
      response: { 200: S.PreloginResponse },
    },
  };
  app.post(`${A}/v1/user/saml/prelogin`, prelogin, async (req) => sso.prelogin(req.body));
  app.post(`${A}/v2/user/sso/prelogin`, prelogin, async (req) => sso.prelogin(req.body));

  app.post(
    `${A}/v1/user/saml/postlogin`,
    {
      config: guard.public,
      schema: {
        tags: ['sso sign-in'],
        summary:
          'SAML ACS (HTTP-POST binding): form or JSON {SAMLResponse, RelayState}; redirects to the allow-listed app URL when the sign-in named one (with #mfaRequired=true&mfaToken=… when a second factor is due)',
        body: S.SamlPostLoginBody,
        response: { 200: SignInAnswer, 302: S.RedirectToApp },
      },
    },
    async (req, reply) => {
      const { response: r, appRedirect } = await sso.samlPostLogin(req.body, client(req));
      const response = r as SignInAnswerBody;
      const refresh = typeof response.refreshToken === 'string' ? response.refreshToken : undefined;
      if (refresh) await refreshCookie(reply, deps.environment, deps.secureCookies, refresh);
      if (appRedirect && refresh) return reply.redirect(appRedirect, 302);
      // A gate's challenge (MFA) on a browser post: back to the app with the challenge in the fragment (never sent to a
      // server, not in Referer); the app's page finishes with the MFA verify routes. No cookie is set yet.
      if (appRedirect && response.mfaRequired === true && typeof response.mfaToken === 'string') {
        const url = new URL(appRedirect);
        url.hash = new URLSearchParams({
          mfaRequired: 'true',
          mfaToken: response.mfaToken,
          mfaEnrolled: String(response.mfaEnrolled === true),
        }).toString();
        return reply.redirect(url.href, 302);
      }
      return response;
    },
  );

  for (const v of ['v1', 'v2']) {
    app.post(
      `${A}/${v}/user/oidc/postlogin`,
      {
        config: guard.public,
        schema: {
          tags: ['sso sign-in'],
          summary: 'OIDC post-login: the code and state the IdP sent to the redirect page',
          body: S.OidcPostLoginBody,
          response: { 200: SignInAnswer },
        },
      },
      async (req, reply) => {
        const response = (await sso.oidcPostLogin(req.body, client(req))).response as SignInAnswerBody;
        if (typeof response.refreshToken === 'string')
          await refreshCookie(reply, deps.environment, deps.secureCookies, response.refreshToken);
        return response;
      },
    );
  }
};
