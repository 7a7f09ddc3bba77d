import { AppError } from '../../http/errors.ts';
import { assertAllowedRedirect, type EnvironmentService } from '../environment/index.ts';
import type { Grantor } from '../roles/index.ts';
import type { LegacySamlBody, LegacySamlConfiguration, OidcSettings } from './compat.schema.ts';
import type { SsoConfigService } from './config.service.ts';

type View = Awaited<ReturnType<SsoConfigService['create']>>;

/** Domain names as the domain claim stores them (domains.service.ts), to compare before claiming. */
const domainName = (d: string) => d.trim().toLowerCase().replace(/\.$/, '');

/**
 * The older admin-portal SSO screens over the SSO configuration service: they see one SAML configuration per account
 * (the account's first, as GET .../saml/configurations answers), with one domain. Every operation is a call of the
 * configuration service; nothing here touches storage itself.
 */
export function createSsoCompat(configs: SsoConfigService, environment: EnvironmentService) {
  /** The account's SAML configuration, or undefined. */
  async function samlConfig(tenantId: string): Promise<View | undefined> {
    const c = await configs.samlOf(tenantId);
    return 'id' in c ? (c as View) : undefined;
  }
  async function requireSaml(tenantId: string): Promise<View> {
    const c = await samlConfig(tenantId);
    if (!c)
      throw new AppError(
        'SSO_CONFIG_NOT_FOUND',
        `Account ${tenantId} has no SAML configuration; create it with POST /team/resources/sso/v1/saml/configurations`,
      );
    return c;
  }
  const legacy = (c: View): LegacySamlConfiguration => {
    const d = c.domains[0];
    return {
      ...c,
      domain: d?.domain ?? '',
      validated: d?.validated ?? false,
      generatedVerification: d?.txtRecord ?? '',
    };
  };
  const reread = async (tenantId: string) => legacy(await requireSaml(tenantId));

  return {
    /**
     * Creates or updates the account's SAML configuration. A `domain` makes it the configuration's only domain: kept
     * (with its validation) when already claimed, claimed otherwise, the other domains released. Failures leave the
     * account as it was: the claim comes first on an existing configuration (and is released if the update fails);
     * a configuration made here is removed again if its domain cannot be claimed.
     */
    async saveSaml(tenantId: string, body: LegacySamlBody, by: Grantor): Promise<LegacySamlConfiguration> {
      const { domain, ...rest } = body;
      const fields = { ...rest, type: 'saml' as const };
      const name = domain ? domainName(domain) : '';
      const current = await samlConfig(tenantId);
      if (!current) {
        const made = await configs.create(tenantId, fields, by);
        if (name) {
          try {
            await configs.addDomain(tenantId, made.id, name);
          } catch (err) {
            await configs.remove(tenantId, made.id);
            throw err;
          }
        }
        return reread(tenantId);
      }
      const kept = name ? current.domains.find((d) => d.domain === name) : undefined;
      const claimed = name && !kept ? await configs.addDomain(tenantId, current.id, name) : undefined;
      try {
        await configs.update(tenantId, current.id, fields, by);
      } catch (err) {
        if (claimed) await configs.removeDomain(tenantId, current.id, claimed.id);
        throw err;
      }
      if (name) {
        const keep = kept?.id ?? claimed?.id;
        for (const d of current.domains) if (d.id !== keep) await configs.removeDomain(tenantId, current.id, d.id);
      }
      return reread(tenantId);
    },

    /** IdP metadata XML for the account's SAML configuration (made from it when the account has none). */
    async saveSamlMetadata(tenantId: string, xml: string): Promise<LegacySamlConfiguration> {
      const current = await samlConfig(tenantId);
      return legacy(
        current
          ? await configs.updateFromMetadata(tenantId, current.id, xml)
          : await configs.createFromMetadata(tenantId, xml),
      );
    },

    /** DNS TXT validation of the SAML configuration's domain. */
    async validateSamlDomain(tenantId: string): Promise<LegacySamlConfiguration> {
      const c = await requireSaml(tenantId);
      const d = c.domains[0];
      if (!d)
        throw new AppError(
          'SSO_DOMAIN_NOT_FOUND',
          'The SAML configuration claims no domain; set one with POST /team/resources/sso/v1/saml/configurations {domain}',
        );
      await configs.validateDomain(tenantId, c.id, d.id);
      return reread(tenantId);
    },

    async defaultRoles(tenantId: string) {
      const c = await samlConfig(tenantId);
      return c ? configs.defaultRoles(tenantId, c.id) : { roleIds: [] };
    },
    setDefaultRoles: async (tenantId: string, roleIds: string[], by: Grantor) =>
      configs.setDefaultRoles(tenantId, (await requireSaml(tenantId)).id, roleIds, by),

    async groups(tenantId: string) {
      const c = await samlConfig(tenantId);
      return c ? configs.groups(tenantId, c.id) : [];
    },
    addGroup: async (tenantId: string, group: string, roleIds: string[], by: Grantor) =>
      configs.addGroup(tenantId, (await requireSaml(tenantId)).id, group, roleIds, by),
    updateGroup: async (tenantId: string, id: string, group: string, roleIds: string[], by: Grantor) =>
      configs.updateGroup(tenantId, (await requireSaml(tenantId)).id, id, group, roleIds, by),
    removeGroup: async (tenantId: string, id: string) =>
      configs.removeGroup(tenantId, (await requireSaml(tenantId)).id, id),

    /** The pre-login view of an account: whether SSO sign-in can be routed to it. */
    async publicView(tenantId: string) {
      return { isActive: (await configs.list(tenantId)).some((c) => c.enabled) };
    },

    /** The environment's OIDC SSO settings (`active`, the redirect page); inactive with no page until set. */
    async oidcSettings(): Promise<OidcSettings> {
      const s = (await configs.settings('oidc')) as Record<string, unknown>;
      return { active: s.active === true, redirectUri: typeof s.redirectUri === 'string' ? s.redirectUri : '' };
    },
    /** Sets them; a redirect page must be in the environment's allowedRedirectUrls (as pre-login requires). */
    async setOidcSettings(body: { active: boolean; redirectUri?: string }): Promise<OidcSettings> {
      if (body.redirectUri)
        assertAllowedRedirect(
          (await environment.settings()).allowedRedirectUrls ?? [],
          body.redirectUri,
          'redirectUri',
        );
      const redirectUri = body.redirectUri ?? (await this.oidcSettings()).redirectUri;
      await configs.setSettings('oidc', { active: body.active, redirectUri });
      return this.oidcSettings();
    },
  };
}
export type SsoCompat = ReturnType<typeof createSsoCompat>;
