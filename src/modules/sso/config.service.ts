import { decrypt, encrypt, newId } from '../../lib/crypto.ts';
import { isUniqueViolation, isUuid } from '../../lib/pg-errors.ts';
import { AppError } from '../../http/errors.ts';
import type { Db, Queryable } from '../../storage/db.ts';
import type { Grantor, RolesService } from '../roles/index.ts';
import type { TenantsService } from '../tenants/index.ts';
import { assertPublicUrl, guardedFetch } from '../../lib/outbound.ts';
import { certBody, normaliseCert, selfSignedCertificate } from './cert.ts';
import { parseIdpMetadata, spMetadata, type SpSide } from './saml.ts';
import { createSsoDomains, domainView, type TxtResolver } from './domains.service.ts';
import type { ConfigBody } from './schema.ts';
import * as store from './store.ts';

export interface SsoConfigDeps {
  db: Db;
  kek: Buffer;
  publicUrl: string;
  roles: RolesService;
  tenants: TenantsService;
  resolveTxt?: TxtResolver;
  /** OUTBOUND_ALLOW_PRIVATE_NETWORKS: metadata URLs and OIDC issuers may be private addresses. */
  allowPrivateNetworks?: boolean;
}

export type SsoConfigService = ReturnType<typeof createSsoConfigService>;

/** SSO configurations of accounts: identity providers, domains, default roles, group mappings, SP metadata. */
/** The sections of the environment's SSO settings document (sso_settings) and their defaults. */
const SETTINGS_DEFAULTS = {
  domains: { allowVerifiedUsersToAddDomains: false, skipDomainVerification: false, bypassDomainCrossValidation: false },
  multipleSso: { unspecifiedTenantStrategy: 'BLOCK', active: false, useActiveTenant: false },
  // The older screens' OIDC settings (compat.service.ts).
  oidc: { active: false, redirectUri: '' },
};
export type SettingsSection = keyof typeof SETTINGS_DEFAULTS;

export function createSsoConfigService(deps: SsoConfigDeps) {
  const { db, kek } = deps;
  let spKeyCache: { privateKeyPem: string; certificatePem: string } | undefined;

  async function spKey(q: Queryable = db): Promise<{ privateKeyPem: string; certificatePem: string }> {
    if (spKeyCache) return spKeyCache;
    let row = await store.spKey(q);
    if (!row) {
      const made = selfSignedCertificate('Gatehouse SAML service provider');
      await store.insertSpKey(q, encrypt(kek, made.privateKeyPem), made.certificatePem);
      row = (await store.spKey(q))!;
    }
    spKeyCache = { privateKeyPem: decrypt(kek, row.private_key_enc), certificatePem: row.certificate };
    return spKeyCache;
  }

  const acsUrl = () => `${deps.publicUrl}/identity/resources/auth/v1/user/saml/postlogin`;
  const defaultEntityId = (tenantId: string) => `${deps.publicUrl}/sso/saml/${encodeURIComponent(tenantId)}`;

  async function spSide(tenantId: string, config?: store.ConfigRow, q: Queryable = db): Promise<SpSide> {
    const k = await spKey(q);
    return { entityId: config?.sp_entity_id || defaultEntityId(tenantId), acsUrl: acsUrl(), ...k };
  }

  async function requireConfig(q: Queryable, tenantId: string, id: string): Promise<store.ConfigRow> {
    const row = isUuid(id) ? await store.findConfig(q, tenantId, id) : undefined;
    if (!row) throw new AppError('SSO_CONFIG_NOT_FOUND', `No SSO configuration ${id} in account ${tenantId}`);
    return row;
  }

  async function view(q: Queryable, r: store.ConfigRow) {
    const [domains, groups] = await Promise.all([
      store.domainsOf(q, r.tenant_id, r.id),
      store.groupsOf(q, r.tenant_id, r.id),
    ]);
    return {
      id: r.id,
      tenantId: r.tenant_id,
      type: r.type,
      enabled: r.enabled,
      ssoEndpoint: r.sso_endpoint,
      idpEntityId: r.idp_entity_id,
      publicCertificate: r.idp_certs[0] ?? '',
      signRequest: r.sign_request,
      acsUrl: acsUrl(),
      spEntityId: r.sp_entity_id || defaultEntityId(r.tenant_id),
      oidcClientId: r.oidc_client_id,
      oidcIssuer: r.oidc_issuer,
      configMetadata: r.config_metadata,
      roleIds: r.default_role_ids,
      domains: domains.map(domainView),
      groups: groups.map(groupView),
      createdAt: r.created_at.toISOString(),
      updatedAt: r.updated_at.toISOString(),
    };
  }
  const groupView = (g: store.GroupRow) => ({ id: g.id, group: g.grp, roleIds: g.role_ids, ssoConfigId: g.config_id });

  /** Column values from a create/update body; SAML certificates must parse, OIDC needs an issuer and a client id. */
  function columns(body: ConfigBody, current?: store.ConfigRow) {
    const v: Parameters<typeof store.insertConfig>[3] = {};
    const type = (body.type?.toLowerCase() ?? current?.type ?? 'saml') as 'saml' | 'oidc';
    v.type = type;
    if (body.enabled !== undefined) v.enabled = body.enabled;
    if (body.ssoEndpoint !== undefined) {
      if (body.ssoEndpoint && !/^https?:\/\//.test(body.ssoEndpoint))
        throw new AppError('VALIDATION', 'ssoEndpoint must be an http(s) URL');
      v.sso_endpoint = body.ssoEndpoint;
    }
    if (body.publicCertificate) {
      try {
        v.idp_certs = [normaliseCert(body.publicCertificate)];
      } catch {
        throw new AppError('VALIDATION', 'publicCertificate must be an X.509 certificate (PEM or base64 DER)');
      }
    }
    if (body.signRequest !== undefined) v.sign_request = body.signRequest;
    if (body.spEntityId !== undefined) v.sp_entity_id = body.spEntityId;
    if (body.idpEntityId !== undefined) v.idp_entity_id = body.idpEntityId;
    if (body.oidcClientId !== undefined) v.oidc_client_id = body.oidcClientId;
    if (body.oidcSecret !== undefined) v.oidc_secret_enc = body.oidcSecret ? encrypt(kek, body.oidcSecret) : null;
    const meta = body.configMetadata;
    if (meta !== undefined) {
      v.config_metadata = meta;
      if (typeof meta.issuer === 'string') v.oidc_issuer = meta.issuer;
      if (typeof meta.scopes === 'string') v.oidc_scopes = meta.scopes;
      if (typeof meta.groupAttribute === 'string') v.group_attribute = meta.groupAttribute;
    }
    if (type === 'oidc' && !v.oidc_issuer && !current?.oidc_issuer && (v.sso_endpoint ?? current?.sso_endpoint))
      v.oidc_issuer = v.sso_endpoint ?? current?.sso_endpoint;
    if (type === 'oidc' && !(v.oidc_issuer ?? current?.oidc_issuer))
      throw new AppError(
        'VALIDATION',
        'an OIDC configuration needs configMetadata.issuer (or ssoEndpoint) naming the issuer',
      );
    if (type === 'oidc' && !(v.oidc_client_id ?? current?.oidc_client_id))
      throw new AppError('VALIDATION', 'an OIDC configuration needs oidcClientId');
    return v;
  }

  const allowPrivate = deps.allowPrivateNetworks === true;
  const metadataFetch = guardedFetch({ allowPrivate, timeoutMs: 10_000, maxBytes: 200_000 });

  /**
   * The IdP metadata at `url` (an account administrator's URL): a refused address is a 400 before any connection;
   * every other failure (unreachable, error status, redirect, too large, not SAML metadata) is one 502 answer, so
   * the answers cannot map which ports or services a host has.
   */
  async function metadataFrom(url: string): Promise<ReturnType<typeof fromMetadata>> {
    await assertPublicUrl(url, 'body.url', allowPrivate);
    try {
      const res = await metadataFetch(url);
      if (res.status !== 200) throw new Error(`HTTP ${res.status}`);
      return fromMetadata(await res.text());
    } catch {
      throw new AppError(
        'SSO_PROVIDER_UNAVAILABLE',
        'IdP metadata could not be read from body.url: it did not answer SAML metadata (HTTP 200, at most 200 kB, within 10 s)',
      );
    }
  }

  /** The OIDC issuer a create or update sets is checked against the address guard (discovery checks it again). */
  async function checkIssuer(v: { oidc_issuer?: string | null; type?: string }): Promise<void> {
    if (v.type === 'oidc' && v.oidc_issuer) await assertPublicUrl(v.oidc_issuer, 'configMetadata.issuer', allowPrivate);
  }

  function fromMetadata(xml: string) {
    const m = parseIdpMetadata(xml);
    return { type: 'saml' as const, sso_endpoint: m.ssoUrl, idp_entity_id: m.entityId, idp_certs: m.certs };
  }

  const domains = createSsoDomains(deps, requireConfig);

  return {
    spSide,
    requireConfig,
    view,
    async list(tenantId: string) {
      const rows = await store.listConfigs(db, tenantId);
      return Promise.all(rows.map((r) => view(db, r)));
    },
    // Default roles and group mappings assign roles at every SSO sign-in: `by` must be able to grant them.
    async create(tenantId: string, body: ConfigBody, by: Grantor) {
      const v = columns(body);
      await checkIssuer(v);
      return db.transaction(async (tx) => {
        await deps.tenants.requireLive(tx, tenantId);
        await deps.roles.assertGrantable(tx, tenantId, by, body.roleIds ?? []);
        const row = await store.insertConfig(tx, tenantId, newId(), { ...v, default_role_ids: body.roleIds });
        return view(tx, row);
      });
    },
    async update(tenantId: string, id: string, body: ConfigBody, by: Grantor) {
      return db.transaction(async (tx) => {
        const current = await requireConfig(tx, tenantId, id);
        await deps.roles.assertGrantable(tx, tenantId, by, body.roleIds ?? []);
        const v = columns(body, current);
        await checkIssuer({
          type: v.type,
          oidc_issuer: v.oidc_issuer ?? (v.type !== current.type ? current.oidc_issuer : undefined),
        });
        const row = await store.updateConfig(tx, tenantId, id, { ...v, default_role_ids: body.roleIds });
        return view(tx, row!);
      });
    },
    async remove(tenantId: string, id: string) {
      if (!(isUuid(id) && (await store.deleteConfig(db, tenantId, id))))
        throw new AppError('SSO_CONFIG_NOT_FOUND', `No SSO configuration ${id} in account ${tenantId}`);
      return {};
    },
    async createFromMetadata(
      tenantId: string,
      xml: string,
      extra: ConfigBody = {},
      parsed?: ReturnType<typeof fromMetadata>,
    ) {
      const v = parsed ?? fromMetadata(xml);
      return db.transaction(async (tx) => {
        await deps.tenants.requireLive(tx, tenantId);
        return view(
          tx,
          await store.insertConfig(tx, tenantId, newId(), { ...columns({ ...extra, type: 'saml' }), ...v }),
        );
      });
    },
    async updateFromMetadata(tenantId: string, id: string, xml: string, parsed?: ReturnType<typeof fromMetadata>) {
      const v = parsed ?? fromMetadata(xml);
      return db.transaction(async (tx) => {
        await requireConfig(tx, tenantId, id);
        return view(tx, (await store.updateConfig(tx, tenantId, id, v))!);
      });
    },
    async createFromMetadataUrl(tenantId: string, url: string, configMetadata?: Record<string, unknown>) {
      return this.createFromMetadata(
        tenantId,
        '',
        { configMetadata: { ...configMetadata, metadataUrl: url } },
        await metadataFrom(url),
      );
    },
    async updateFromMetadataUrl(tenantId: string, id: string, url: string) {
      return this.updateFromMetadata(tenantId, id, '', await metadataFrom(url));
    },
    /** The SAML configuration of the account (the first one), for the legacy /saml/configurations routes. */
    async samlOf(tenantId: string) {
      const row = (await store.listConfigs(db, tenantId)).find((r) => r.type === 'saml');
      return row ? view(db, row) : {};
    },
    async spMetadataXml(tenantId: string) {
      await deps.tenants.requireLive(db, tenantId);
      const row = (await store.listConfigs(db, tenantId)).find((r) => r.type === 'saml');
      return spMetadata(await spSide(tenantId, row), Boolean(row?.sign_request));
    },
    async spCertificate() {
      const k = await spKey();
      return { certificate: certBody(k.certificatePem), pem: k.certificatePem };
    },
    async vendorConfig() {
      const k = await spKey();
      return {
        acsUrl: acsUrl(),
        spEntityIdPattern: defaultEntityId('{tenantId}'),
        spCertificate: certBody(k.certificatePem),
        signatureAlgorithms: ['rsa-sha256', 'rsa-sha384', 'rsa-sha512'],
      };
    },

    // -- domains (domains.service.ts): useTxtResolver, addDomain, removeDomain, validateDomain, markValidated, forceValidate --
    ...domains,

    // -- roles and groups --
    async setDefaultRoles(tenantId: string, configId: string, roleIds: string[], by: Grantor) {
      return db.transaction(async (tx) => {
        await requireConfig(tx, tenantId, configId);
        await deps.roles.assertGrantable(tx, tenantId, by, roleIds);
        await store.updateConfig(tx, tenantId, configId, { default_role_ids: roleIds });
        return { roleIds };
      });
    },
    async defaultRoles(tenantId: string, configId: string) {
      return { roleIds: (await requireConfig(db, tenantId, configId)).default_role_ids };
    },
    async addGroup(tenantId: string, configId: string, group: string, roleIds: string[], by: Grantor) {
      try {
        return await db.transaction(async (tx) => {
          await requireConfig(tx, tenantId, configId);
          await deps.roles.assertGrantable(tx, tenantId, by, roleIds);
          return groupView(await store.insertGroup(tx, { tenantId, id: newId(), configId, group, roleIds }));
        });
      } catch (err) {
        if (isUniqueViolation(err))
          throw new AppError('CONFLICT', `group ${group} is already mapped on this configuration`);
        throw err;
      }
    },
    async groups(tenantId: string, configId: string) {
      await requireConfig(db, tenantId, configId);
      return (await store.groupsOf(db, tenantId, configId)).map(groupView);
    },
    async updateGroup(
      tenantId: string,
      configId: string,
      groupId: string,
      group: string,
      roleIds: string[],
      by: Grantor,
    ) {
      return db.transaction(async (tx) => {
        await requireConfig(tx, tenantId, configId);
        await deps.roles.assertGrantable(tx, tenantId, by, roleIds);
        const row = isUuid(groupId)
          ? await store.updateGroup(tx, tenantId, configId, groupId, group, roleIds)
          : undefined;
        if (!row) throw new AppError('SSO_GROUP_NOT_FOUND', `No group ${groupId} on configuration ${configId}`);
        return groupView(row);
      });
    },
    async removeGroup(tenantId: string, configId: string, groupId: string) {
      if (!(isUuid(groupId) && isUuid(configId) && (await store.deleteGroup(db, tenantId, configId, groupId))))
        throw new AppError('SSO_GROUP_NOT_FOUND', `No group ${groupId} on configuration ${configId}`);
      return {};
    },

    // -- excluded emails and settings --
    async exclude(tenantId: string, email: string) {
      await deps.tenants.requireLive(db, tenantId);
      await store.excludeEmail(db, tenantId, email.trim().toLowerCase());
      return { email: email.trim().toLowerCase() };
    },
    excluded: async (tenantId: string) => ({ emails: await store.excludedEmails(db, tenantId) }),
    async unexclude(tenantId: string, email: string) {
      if (!(await store.unexcludeEmail(db, tenantId, email.trim().toLowerCase())))
        throw new AppError('SSO_EMAIL_NOT_EXCLUDED', `${email} is not excluded from SSO`);
      return {};
    },
    async settings<S extends SettingsSection>(section: S, q: Queryable = db) {
      const all = await store.readSettings(q);
      const defaults: (typeof SETTINGS_DEFAULTS)[S] = SETTINGS_DEFAULTS[section];
      return { ...defaults, ...((all[section] as object) ?? {}) };
    },
    async setSettings(section: SettingsSection, value: Record<string, unknown>) {
      await store.mergeSettings(db, { [section]: value });
      return this.settings(section);
    },
  };
}
