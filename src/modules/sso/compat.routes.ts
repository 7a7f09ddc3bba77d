import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { accountOf, guard } from '../../http/auth.ts';
import { AppError } from '../../http/errors.ts';
import * as C from './compat.schema.ts';
import { createSsoCompat } from './compat.service.ts';
import { grantorOf } from '../roles/index.ts';
import type { SsoRouteDeps } from './routes.ts';
import * as S from './schema.ts';

const tags = ['sso'];
const READ = guard.any('fe.secure.read.samlConfiguration');
const WRITE = guard.any('fe.secure.write.samlConfiguration');
const PREFIXES = ['/team/resources/sso', '/identity/resources/sso'];

/**
 * Paths of the older admin-portal SSO screens (one SAML configuration per account) and the environment's OIDC SSO
 * settings, as thin routes over the SSO configuration service (compat.service.ts). Registered by ssoRoutes as an
 * encapsulated plugin: its JSON parser takes an empty body as none, since those screens send PUTs with a JSON
 * content type and no body.
 */
export const ssoCompatRoutes: FastifyPluginAsyncTypebox<SsoRouteDeps> = async (app, deps) => {
  const compat = createSsoCompat(deps.configs, deps.environment);
  const parseJson = app.getDefaultJsonParser('error', 'ignore');
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (req, body, done) =>
    (body as string).trim() === '' ? done(null, undefined) : parseJson(req, body as string, done),
  );

  for (const P of PREFIXES) {
    const SAML = `${P}/v1/saml/configurations`;
    app.post(
      SAML,
      {
        config: WRITE,
        schema: {
          tags,
          summary: "Create or update the account's SAML configuration (older screens; `domain` becomes its one domain)",
          body: C.LegacySamlBody,
          response: { 201: C.LegacySamlConfiguration },
        },
      },
      async (req, reply) =>
        reply.status(201).send(await compat.saveSaml(accountOf(req), req.body, grantorOf(req.auth!))),
    );
    app.put(
      `${SAML}/metadata`,
      {
        config: WRITE,
        schema: {
          tags,
          summary: "Fill the account's SAML configuration from IdP metadata XML (made when missing)",
          body: S.MetadataBody,
          response: { 200: C.LegacySamlConfiguration },
        },
      },
      async (req) => compat.saveSamlMetadata(accountOf(req), req.body.metadata),
    );
    app.put(
      `${P}/v1/saml/validations/domain`,
      {
        config: WRITE,
        schema: {
          tags,
          summary: "Validate the SAML configuration's domain by its DNS TXT record (no body)",
          response: { 200: C.LegacySamlConfiguration },
        },
      },
      async (req) => compat.validateSamlDomain(accountOf(req)),
    );
    app.get(
      `${SAML}/roles/default`,
      {
        config: READ,
        schema: {
          tags,
          summary: 'Default roles of users provisioned by the SAML configuration ([] when none)',
          response: { 200: S.RoleIdsAnswer },
        },
      },
      async (req) => compat.defaultRoles(accountOf(req)),
    );
    app.post(
      `${SAML}/roles/default`,
      {
        config: WRITE,
        schema: {
          tags,
          summary: 'Set the default roles of users provisioned by the SAML configuration',
          body: S.RolesBody,
          response: { 201: S.RoleIdsAnswer },
        },
      },
      async (req, reply) =>
        reply.status(201).send(await compat.setDefaultRoles(accountOf(req), req.body.roleIds, grantorOf(req.auth!))),
    );

    const GROUPS = `${P}/v2/saml/configurations/groups`;
    app.get(
      GROUPS,
      {
        config: READ,
        schema: {
          tags,
          summary: 'IdP group mappings of the SAML configuration ([] when none)',
          response: { 200: Type.Array(S.Group) },
        },
      },
      async (req) => compat.groups(accountOf(req)),
    );
    app.post(
      GROUPS,
      {
        config: WRITE,
        schema: {
          tags,
          summary: 'Map an IdP group to roles on the SAML configuration',
          body: S.GroupBody,
          response: { 201: S.Group },
        },
      },
      async (req, reply) =>
        reply
          .status(201)
          .send(await compat.addGroup(accountOf(req), req.body.group, req.body.roleIds, grantorOf(req.auth!))),
    );
    app.patch(
      `${GROUPS}/:id`,
      {
        config: WRITE,
        schema: {
          tags,
          summary: 'Change an IdP group mapping of the SAML configuration',
          params: C.LegacyGroupParams,
          body: S.GroupBody,
          response: { 200: S.Group },
        },
      },
      async (req) =>
        compat.updateGroup(accountOf(req), req.params.id, req.body.group, req.body.roleIds, grantorOf(req.auth!)),
    );
    app.delete(
      `${GROUPS}/:id`,
      {
        config: WRITE,
        schema: {
          tags,
          summary: 'Remove an IdP group mapping of the SAML configuration',
          params: C.LegacyGroupParams,
          response: { 200: S.Empty },
        },
      },
      async (req) => compat.removeGroup(accountOf(req), req.params.id),
    );

    app.get(
      `${P}/v2/configurations/public`,
      {
        config: guard.optional,
        schema: {
          tags,
          summary: "Pre-login view of an account's SSO (user token, tenant header or ?tenantId)",
          querystring: C.PublicSsoQuery,
          response: { 200: C.PublicSso },
        },
      },
      async (req) => {
        let tenantId = req.query.tenantId;
        if (!tenantId) {
          try {
            tenantId = accountOf(req);
          } catch {
            throw new AppError(
              'TENANT_HEADER_REQUIRED',
              'Name the account: a user token, the gatehouse-tenant-id header or the tenantId query parameter',
            );
          }
        }
        return compat.publicView(tenantId);
      },
    );

    const OIDC = `${P}/v1/oidc/configurations`;
    app.post(
      OIDC,
      {
        config: guard.vendor,
        schema: {
          tags,
          summary:
            "Configure the environment's OIDC SSO: active, and the redirect page the OpenID provider sends the code to",
          body: C.OidcSettingsBody,
          response: { 201: C.OidcSettings },
        },
      },
      async (req, reply) => reply.status(201).send(await compat.setOidcSettings(req.body)),
    );
    app.get(
      OIDC,
      {
        config: READ,
        schema: { tags, summary: "The environment's OIDC SSO settings", response: { 200: C.OidcSettings } },
      },
      async () => compat.oidcSettings(),
    );
  }
};
