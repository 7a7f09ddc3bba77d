import { resolveTxt } from 'node:dns/promises';
import { newId, randomSecret } from '../../lib/crypto.ts';
import { isUniqueViolation, isUuid } from '../../lib/pg-errors.ts';
import { AppError } from '../../http/errors.ts';
import type { Db, Queryable } from '../../storage/db.ts';
import * as store from './store.ts';

/** Looks up TXT records of a name (node:dns by default; tests and air-gapped sites inject their own). */
export type TxtResolver = (name: string) => Promise<string[][]>;

export const TXT_PREFIX = 'gatehouse-site-verification=';
const DOMAIN = /^(?=.{3,253}$)([a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,63}$/;

export const domainView = (d: store.DomainRow) => ({
  id: d.id,
  domain: d.domain,
  validated: d.validated,
  txtRecord: d.txt_record,
  ssoConfigId: d.config_id,
  createdAt: d.created_at.toISOString(),
});

/**
 * Email domains claimed by SSO configurations and their DNS TXT validation; part of the SSO configuration service
 * (config.service.ts), which passes its `requireConfig` and spreads these methods into its own.
 */
export function createSsoDomains(
  deps: { db: Db; resolveTxt?: TxtResolver },
  requireConfig: (q: Queryable, tenantId: string, id: string) => Promise<store.ConfigRow>,
) {
  const { db } = deps;
  let txt: TxtResolver = deps.resolveTxt ?? resolveTxt;

  return {
    /** Replaces the TXT lookup (a local check for tests or sites without public DNS). */
    useTxtResolver(fn: TxtResolver) {
      txt = fn;
    },
    async addDomain(tenantId: string, configId: string, domain: string) {
      const name = domain.trim().toLowerCase().replace(/\.$/, '');
      if (!DOMAIN.test(name)) throw new AppError('VALIDATION', 'domain must be a DNS name such as example.com');
      return db.transaction(async (tx) => {
        await requireConfig(tx, tenantId, configId);
        if (await store.validatedElsewhere(tx, name, tenantId))
          throw new AppError('SSO_DOMAIN_TAKEN', `domain ${name} is verified by another account`);
        return domainView(
          await store.insertDomain(tx, {
            tenantId,
            id: newId(),
            configId,
            domain: name,
            txt: `${TXT_PREFIX}${randomSecret(18)}`,
          }),
        );
      });
    },
    async removeDomain(tenantId: string, configId: string, domainId: string) {
      if (!(isUuid(domainId) && isUuid(configId) && (await store.deleteDomain(db, tenantId, configId, domainId))))
        throw new AppError('SSO_DOMAIN_NOT_FOUND', `No domain ${domainId} on configuration ${configId}`);
      return {};
    },
    /** DNS validation: the domain's TXT records must hold the record we issued. */
    async validateDomain(tenantId: string, configId: string, domainId: string) {
      const d =
        isUuid(domainId) && isUuid(configId) ? await store.findDomain(db, tenantId, configId, domainId) : undefined;
      if (!d) throw new AppError('SSO_DOMAIN_NOT_FOUND', `No domain ${domainId} on configuration ${configId}`);
      if (d.validated) return domainView(d);
      let records: string[][] = [];
      try {
        records = await txt(d.domain);
      } catch {
        records = [];
      }
      if (!records.some((parts) => parts.join('') === d.txt_record)) {
        throw new AppError(
          'SSO_DOMAIN_NOT_VERIFIED',
          `No TXT record "${d.txt_record}" found at ${d.domain}; add it to the domain's DNS and validate again`,
        );
      }
      return this.markValidated(tenantId, d);
    },
    async markValidated(tenantId: string, d: store.DomainRow) {
      try {
        await db.transaction(async (tx) => {
          if (await store.validatedElsewhere(tx, d.domain, tenantId))
            throw new AppError('SSO_DOMAIN_TAKEN', `domain ${d.domain} is verified by another account`);
          await store.markValidated(tx, tenantId, d.id);
        });
      } catch (err) {
        if (isUniqueViolation(err))
          throw new AppError('SSO_DOMAIN_TAKEN', `domain ${d.domain} is verified by another configuration`);
        throw err;
      }
      return domainView({ ...d, validated: true });
    },
    /** Vendor-only admin confirmation: marks the domain validated wherever it was claimed (the first claim). */
    async forceValidate(domain: string) {
      const name = domain.trim().toLowerCase();
      const claims = await store.domainByName(db, name);
      if (!claims.length) throw new AppError('SSO_DOMAIN_NOT_FOUND', `No account claims domain ${name}`);
      return this.markValidated(claims[0].tenant_id, claims[0]);
    },
  };
}
