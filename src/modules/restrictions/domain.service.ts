import { domainToASCII } from 'node:url';
import { AppError } from '../../http/errors.ts';
import { newId } from '../../lib/crypto.ts';
import { isUniqueViolation, isUuid } from '../../lib/pg-errors.ts';
import type { Db, Queryable } from '../../storage/db.ts';
import type { TenantsService } from '../tenants/index.ts';
import { PUBLIC_EMAIL_DOMAINS } from './public-domains.ts';
import type { CreateDomainRule, DomainConfigBody, ReplaceDomains } from './schema.ts';
import * as store from './store.ts';

/** Where a domain rule lives: the environment (null) or an account. */
export type DomainScope = string | null;
const key = (scope: DomainScope) => scope ?? '';

const LABEL = /^(?!-)[a-z0-9-]{1,63}(?<!-)$/;

/** Lower-case ASCII (punycode) form of a domain; 400 naming the field when it is not a domain name with a dot. */
export function normalizeDomain(input: string, field = 'domain'): string {
  const raw = input.trim().replace(/^@/, '').replace(/\.$/, '').toLowerCase();
  const ascii = raw ? domainToASCII(raw) : '';
  if (!ascii || ascii.length > 253 || !ascii.includes('.') || !ascii.split('.').every((l) => LABEL.test(l))) {
    throw new AppError(
      'VALIDATION',
      `${field} "${input.slice(0, 100)}" is not a domain name (e.g. acme.com; letters, digits and hyphens, at least one dot)`,
    );
  }
  return ascii;
}

/** The email's domain and every parent domain with a dot: eng.acme.com → [eng.acme.com, acme.com]. */
function suffixesOf(email: string): string[] | undefined {
  const at = email.lastIndexOf('@');
  if (at < 0) return undefined;
  let domain: string;
  try {
    domain = normalizeDomain(email.slice(at + 1));
  } catch {
    return undefined;
  }
  const labels = domain.split('.');
  return labels.slice(0, -1).map((_, i) => labels.slice(i).join('.'));
}

const toRule = (r: store.DomainRuleRow) => ({ id: r.id, domain: r.domain, type: r.type });
const toConfig = (c: store.DomainConfigRow | undefined) => ({
  active: c?.active ?? false,
  listType: c?.list_type ?? ('BLOCK' as const),
  blockPublicDomains: c?.block_public_domains ?? false,
});

/**
 * Whether an email may join: the environment's restrictions, and the account's when `tenantId` is given (a new user
 * of that account: invitation, SSO provisioning, an admin creating a user). Both must admit it. An active
 * configuration admits a domain that is (or is below) a domain on its ALLOW list, or that is not (below) one on its
 * BLOCK list; `blockPublicDomains` also refuses free-mail domains. One statement.
 */
export async function domainVerdict(
  q: Queryable,
  tenantId: string | null,
  email: string | null,
): Promise<{ allowed: true } | { allowed: false; reason: string }> {
  // A user without an email (signed up with a username) has no domain to admit: refused wherever domains are restricted.
  const suffixes = email === null ? undefined : suffixesOf(email.trim().toLowerCase());
  const scopes = tenantId ? ['', tenantId] : [''];
  const configs = await store.domainVerdicts(q, scopes, suffixes ?? []);
  for (const c of configs) {
    const where = c.scope === '' ? 'the environment' : `account ${c.scope}`;
    if (!suffixes)
      return {
        allowed: false,
        reason: `${email === null ? 'there is no email' : 'the email has no valid domain'}, and ${where} restricts email domains`,
      };
    if (c.block_public_domains && suffixes.some((s) => PUBLIC_EMAIL_DOMAINS.has(s)))
      return { allowed: false, reason: `${where} does not accept public email domains (${suffixes[0]})` };
    if (c.list_type === 'ALLOW' && !c.listed)
      return { allowed: false, reason: `${suffixes[0]} is not on the allowed email domains of ${where}` };
    if (c.list_type === 'BLOCK' && c.listed)
      return { allowed: false, reason: `${suffixes[0]} is a blocked email domain of ${where}` };
  }
  return { allowed: true };
}

export const domainAllowed = async (q: Queryable, tenantId: string | null, email: string): Promise<boolean> =>
  (await domainVerdict(q, tenantId, email)).allowed;

/** Throws 403 `DOMAIN_RESTRICTED` naming the rule when `domainAllowed` says no; `field` names the input. */
export async function assertEmailDomainAllowed(
  q: Queryable,
  tenantId: string | null,
  email: string | null,
  field = 'email',
): Promise<void> {
  const v = await domainVerdict(q, tenantId, email);
  if (!v.allowed) throw new AppError('DOMAIN_RESTRICTED', `${field}: ${v.reason}`);
}

export type DomainRestrictionsService = ReturnType<typeof createDomainRestrictionsService>;

export function createDomainRestrictionsService(deps: { db: Db; tenants: TenantsService }) {
  const { db } = deps;
  const requireScope = async (q: Queryable, scope: DomainScope, lock?: 'FOR SHARE') => {
    if (scope !== null) await deps.tenants.requireLive(q, scope, 'gatehouse-tenant-id', lock);
  };

  /** An active allow list without domains would refuse every new user: refused, with the reason. */
  async function assertUsable(tx: Queryable, scope: DomainScope): Promise<void> {
    const c = await store.domainConfig(tx, key(scope));
    if (c?.active && c.list_type === 'ALLOW' && (await store.countDomains(tx, key(scope), 'ALLOW')) === 0) {
      throw new AppError(
        'RESTRICTION_LOCKOUT',
        `The allowed email domains of ${scope === null ? 'the environment' : `account ${scope}`} would be empty while the allow list is active: every sign-up, invitation and SSO provisioning would be refused. Add allowed domains first`,
      );
    }
  }

  return {
    async getConfig(scope: DomainScope) {
      await requireScope(db, scope);
      return toConfig(await store.domainConfig(db, key(scope)));
    },

    /** `active` is required; `type` (the list enforced) and `blockPublicDomains` keep their value when left out. */
    async setConfig(scope: DomainScope, body: DomainConfigBody) {
      return db.transaction(async (tx) => {
        await requireScope(tx, scope, 'FOR SHARE');
        const current = toConfig(await store.domainConfig(tx, key(scope), true));
        const next = {
          active: body.active,
          list_type: body.type ?? current.listType,
          block_public_domains: body.blockPublicDomains ?? current.blockPublicDomains,
        };
        await store.writeDomainConfig(tx, key(scope), next);
        await assertUsable(tx, scope);
        return toConfig(next);
      });
    },

    async list(scope: DomainScope, limit: number, page: number) {
      await requireScope(db, scope);
      const { rows, total } = await store.listDomains(db, key(scope), { limit, page });
      return { items: rows.map(toRule), total, limit, page };
    },

    async create(scope: DomainScope, body: CreateDomainRule) {
      const domain = normalizeDomain(body.domain);
      try {
        return await db.transaction(async (tx) => {
          await requireScope(tx, scope, 'FOR SHARE');
          return toRule((await store.insertDomains(tx, key(scope), body.type, [{ id: newId(), domain }]))[0]);
        });
      } catch (err) {
        if (isUniqueViolation(err))
          throw new AppError('DOMAIN_RULE_EXISTS', `${domain} is already on the ${body.type} list`, {
            domain,
            type: body.type,
          });
        throw err;
      }
    },

    async remove(scope: DomainScope, id: string) {
      return db.transaction(async (tx) => {
        await requireScope(tx, scope, 'FOR SHARE');
        const row = isUuid(id) ? await store.findDomain(tx, key(scope), id.toLowerCase()) : undefined;
        if (!row) throw new AppError('DOMAIN_RULE_NOT_FOUND', `No domain restriction with id ${id.slice(0, 64)}`);
        await store.deleteDomain(tx, key(scope), row.id);
        await assertUsable(tx, scope);
        return toRule(row);
      });
    },

    /** Replaces the whole list of one type; repeated domains (after normalising) are kept once. */
    async replace(scope: DomainScope, body: ReplaceDomains) {
      const domains = [...new Set(body.domains.map((d, i) => normalizeDomain(d, `domains[${i}]`)))];
      return db.transaction(async (tx) => {
        await requireScope(tx, scope, 'FOR SHARE');
        await store.deleteDomainsOfType(tx, key(scope), body.type);
        const rows = await store.insertDomains(
          tx,
          key(scope),
          body.type,
          domains.map((domain) => ({ id: newId(), domain })),
        );
        await assertUsable(tx, scope);
        return rows.map(toRule);
      });
    },
  };
}
