import { AppError } from '../../http/errors.ts';
import { pageEnvelope } from '../../http/paging.ts';
import { newId } from '../../lib/crypto.ts';
import { isUniqueViolation, isUuid } from '../../lib/pg-errors.ts';
import { iso } from '../../lib/time.ts';
import type { Db, Queryable } from '../../storage/db.ts';
import type { Invalidation } from '../../storage/invalidation.ts';
import { createReadCache } from '../../storage/read-cache.ts';
import { checkClaims, render, type TokenFacts } from './claims.ts';
import type { ListQuery, Targeting, TargetingBody, Template, TemplateBody, TemplatePatch } from './schema.ts';
import * as store from './store.ts';
import { checkRules, compileRules, type TargetFacts, type TargetingRule } from './targeting.ts';

/** How long a change made through another instance may take to reach this one's tokens (as other settings caches). */
export const JWT_TEMPLATES_CACHE_MS = 2000;
/** Invalidation topic of the templates and targeting rules (src/storage/invalidation.ts). */
export const JWT_TEMPLATES_TOPIC = 'jwt-templates';

/** What token issue needs of a template: the rendered claims and the access token's lifetime. */
export interface TokenTemplate {
  claims: Record<string, unknown>;
  expiration: number;
}
export type TemplateFacts = TokenFacts & Omit<TargetFacts, 'userId' | 'tenantId' | 'email' | 'applicationId'>;

type Compiled = { pick: (f: TargetFacts) => string | undefined; byKey: Map<string, store.TemplateRow> } | null;

export type JwtTemplatesService = ReturnType<typeof createJwtTemplatesService>;

/**
 * JWT templates (claims and lifetime of user access tokens) and the targeting rules that choose one per token. Token
 * issue reads the rules and the templates they name from an in-process cache: no statement per sign-in or refresh
 * (dropped on every instance by a notified change; re-read every JWT_TEMPLATES_CACHE_MS while notifications are down),
 * and none beyond that when no rule exists.
 */
export function createJwtTemplatesService(deps: { db: Db; vendorId: () => string; invalidation?: Invalidation }) {
  const { db } = deps;
  const cache = createReadCache<Compiled>({ ttlMs: JWT_TEMPLATES_CACHE_MS, max: 1 });
  deps.invalidation?.subscribe(JWT_TEMPLATES_TOPIC, () => cache.invalidate());

  const view = (r: store.TemplateRow): Template => ({
    id: r.id,
    vendorId: deps.vendorId(),
    key: r.key,
    name: r.name,
    description: r.description,
    expiration: r.expiration,
    algorithm: r.algorithm,
    templateSchema: { claims: r.claims },
    createdAt: iso(r.created_at)!,
    updatedAt: iso(r.updated_at)!,
  });
  const targetingView = (r: store.TargetingRow): Targeting => ({
    id: r.id,
    createdAt: iso(r.created_at)!,
    updatedAt: iso(r.updated_at)!,
    targeting: { rules: r.rules },
  });

  function checkTemplate(v: store.TemplateValues): void {
    // Tokens are checked by this platform and by the vendor SDKs against the public keys (JWKS): a token signed with
    // a shared secret would be refused by both, so HS256 is refused here rather than issuing unusable tokens.
    if (v.algorithm !== 'RS256')
      throw new AppError(
        'JWT_TEMPLATE_ALGORITHM_UNSUPPORTED',
        'body.algorithm must be RS256: access tokens are verified against the public keys at /.well-known/jwks.json, which cannot check an HS256 (shared secret) signature',
      );
    checkClaims(v.claims);
  }
  async function changing<T>(fn: (tx: Queryable) => Promise<T>): Promise<T> {
    try {
      // The notification leaves with the commit: other instances drop their copy, never for a rolled-back change.
      return await db.transaction(async (tx) => {
        const out = await fn(tx);
        await deps.invalidation?.publish(tx, JWT_TEMPLATES_TOPIC);
        return out;
      });
    } catch (e) {
      if (isUniqueViolation(e))
        throw new AppError('JWT_TEMPLATE_KEY_EXISTS', 'body.key is the key of another template');
      throw e;
    } finally {
      cache.invalidate();
    }
  }
  async function requireRow(q: Queryable, id: string, lock = false): Promise<store.TemplateRow> {
    const row = isUuid(id) ? await store.byId(q, id, lock) : undefined;
    if (!row) throw new AppError('JWT_TEMPLATE_NOT_FOUND');
    return row;
  }
  /** Refuses a template change that would leave a targeting rule naming a missing key. */
  async function checkNotTargeted(tx: Queryable, key: string, what: string): Promise<void> {
    const t = await store.targeting(tx, true);
    const i = t?.rules.findIndex((r) => r.treatment === key) ?? -1;
    if (i >= 0)
      throw new AppError(
        'JWT_TEMPLATE_IN_USE',
        `The template "${key}" is the treatment of targeting rule ${i}: change the targeting first, then ${what}`,
      );
  }
  async function checkedRules(tx: Queryable, rules: TargetingRule[]): Promise<TargetingRule[]> {
    const keys = checkRules(rules);
    const missing = keys.size ? await store.missingKeys(tx, [...keys]) : [];
    if (missing.length) {
      const i = rules.findIndex((r) => r.treatment === missing[0]);
      throw new AppError('VALIDATION', `body.rules.${i}.treatment: no JWT template has the key "${missing[0]}"`);
    }
    return rules.map((r) => ({
      conditionLogic: 'and',
      conditions: r.conditions.map((c) => ({ attribute: c.attribute, op: c.op, value: c.value, negate: !!c.negate })),
      treatment: r.treatment,
    }));
  }

  async function load(q: Queryable): Promise<Compiled> {
    const found = await store.forTokens(q);
    if (!found) return null;
    const byKey = new Map(found.templates.map((t) => [t.key, t as store.TemplateRow]));
    return { pick: compileRules(found.rules), byKey };
  }

  return {
    async create(b: TemplateBody): Promise<Template> {
      const v = { ...b, description: b.description ?? '', claims: b.templateSchema.claims };
      checkTemplate(v);
      return view(await changing((tx) => store.insert(tx, newId(), v)));
    },
    async get(id: string): Promise<Template> {
      return view(await requireRow(db, id));
    },
    async list(query: ListQuery, path: string) {
      const limit = query._limit ?? 50;
      const page = query._offset ?? 0;
      const ids = query.ids?.filter((id) => isUuid(id));
      const { rows, total } = await store.list(db, {
        keys: query.keys,
        ids,
        limit,
        offset: page * limit,
        sortBy: query._sortBy ?? 'createdAt',
        order: query._order ?? 'ASC',
      });
      return pageEnvelope(rows.map(view), { total, limit, page, path, query });
    },
    async update(id: string, p: TemplatePatch): Promise<Template> {
      return view(
        await changing(async (tx) => {
          const row = await requireRow(tx, id, true);
          const v: store.TemplateValues = {
            key: p.key ?? row.key,
            name: p.name ?? row.name,
            description: p.description ?? row.description,
            expiration: p.expiration ?? row.expiration,
            algorithm: p.algorithm ?? row.algorithm,
            claims: p.templateSchema?.claims ?? row.claims,
          };
          checkTemplate(v);
          if (v.key !== row.key) await checkNotTargeted(tx, row.key, 'change its key');
          return store.update(tx, id, v);
        }),
      );
    },
    async remove(id: string): Promise<void> {
      await changing(async (tx) => {
        const row = await requireRow(tx, id, true);
        await checkNotTargeted(tx, row.key, 'delete it');
        await store.remove(tx, id);
      });
    },

    async targeting(): Promise<Targeting> {
      const row = await store.targeting(db);
      if (!row) throw new AppError('JWT_TARGETING_NOT_FOUND');
      return targetingView(row);
    },
    async createTargeting(b: TargetingBody): Promise<Targeting> {
      const row = await changing(async (tx) =>
        store.insertTargeting(tx, newId(), await checkedRules(tx, b.rules ?? [])),
      );
      if (!row) throw new AppError('JWT_TARGETING_EXISTS');
      return targetingView(row);
    },
    async putTargeting(b: TargetingBody): Promise<Targeting> {
      return targetingView(
        await changing(async (tx) => store.upsertTargeting(tx, newId(), await checkedRules(tx, b.rules ?? []))),
      );
    },
    async patchTargeting(id: string, b: TargetingBody): Promise<Targeting> {
      return targetingView(
        await changing(async (tx) => {
          const row = await store.targeting(tx, true);
          if (!row || row.id !== id) throw new AppError('JWT_TARGETING_NOT_FOUND');
          if (b.rules === undefined) return row;
          return store.upsertTargeting(tx, id, await checkedRules(tx, b.rules));
        }),
      );
    },
    async removeTargeting(id: string): Promise<void> {
      const gone = isUuid(id) && (await changing((tx) => store.removeTargeting(tx, id)));
      if (!gone) throw new AppError('JWT_TARGETING_NOT_FOUND');
    },

    /**
     * The template of a user access token being issued: the first targeting rule matching the token's account,
     * application, user or roles chooses it; undefined when none does. Reads the cache (see above); a miss reads
     * through `q`, the issuing flow's connection (a transaction's own, so it never waits on that transaction).
     */
    async forToken(q: Queryable, f: TemplateFacts): Promise<TokenTemplate | undefined> {
      const compiled = await cache.get('targeting', () => load(q));
      if (!compiled) return undefined;
      const key = compiled.pick(f);
      const t = key === undefined ? undefined : compiled.byKey.get(key);
      if (!t) return undefined;
      return { claims: render(t.claims, f), expiration: t.expiration };
    },
  };
}
