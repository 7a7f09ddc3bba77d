import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { accountOf, guard } from '../../http/auth.ts';
import { AppError } from '../../http/errors.ts';
import { createIpRestrictionsService, IP_TOPIC, type Caller } from './ip.service.ts';
import type { IpRestrictionsDeps, IpRestrictionsService } from './ip.service.ts';
import { parseRange } from './ip.ts';
import { CreateIpRule, IpRule, TenantHeader } from './schema.ts';

/** Most rules one bulk call adds. */
export const IP_BULK_MAX = 100;

/**
 * Adds many IP rules at once, all or nothing: one transaction in which each rule goes through the single-create
 * rules (a service over the transaction's handle, so its nested transactions join this one); the lock-out check
 * runs after every rule, and since a bulk only adds, a state that passes at the end passed on the way.
 */
export function createIpBulk(deps: IpRestrictionsDeps & { ip: IpRestrictionsService }) {
  return {
    async create(tenantId: string, rules: CreateIpRule[], caller: Caller): Promise<IpRule[]> {
      // Refuse duplicates inside the batch before anything is written (the 409 names both entries).
      const seen = new Map<string, number>();
      rules.forEach((r, i) => {
        let key: string;
        try {
          key = `${r.strategy}|${parseRange(r.ip, `[${i}].ip`).text}`;
        } catch (err) {
          throw err instanceof AppError
            ? new AppError(err.code, `[${i}]: ${err.message}`, { index: i, ...err.context })
            : err;
        }
        const first = seen.get(key);
        if (first !== undefined)
          throw new AppError(
            'IP_RULE_EXISTS',
            `[${i}]: ${r.ip} repeats entry [${first}] of the same ${r.strategy} list`,
            { index: i, duplicateOf: first },
          );
        seen.set(key, i);
      });
      try {
        return await deps.db.transaction(async (tx) => {
          const inner = createIpRestrictionsService({ db: tx, tenants: deps.tenants, signInTables: deps.signInTables });
          const out: IpRule[] = [];
          for (const [i, r] of rules.entries()) {
            try {
              out.push(await inner.create(tenantId, r, caller));
            } catch (err) {
              throw err instanceof AppError
                ? new AppError(err.code, `[${i}]: ${err.message}`, { index: i, ...err.context })
                : err;
            }
          }
          await deps.invalidation?.publish(tx, IP_TOPIC, tenantId);
          return out;
        });
      } finally {
        deps.ip.forget(tenantId); // the sign-in gate re-reads the account's rules
      }
    },
  };
}
export type IpBulk = ReturnType<typeof createIpBulk>;

const IP = '/identity/resources/configurations/v1/restrictions/ip';

/** POST .../restrictions/ip/bulk: a JSON array of single-create bodies (1–100) → 201 the created rules, in order. */
export const ipBulkRoutes: FastifyPluginAsyncTypebox<{
  bulk: IpBulk;
  callerOf: (req: FastifyRequest) => Caller;
}> = async (app, { bulk, callerOf }) => {
  app.post(
    `${IP}/bulk`,
    {
      config: guard.any('fe.secure.write.securityPolicy'),
      schema: {
        tags: ['IP restrictions'],
        summary: `Add many addresses or CIDR ranges at once (1–${IP_BULK_MAX}, all or nothing); an error names the entry as [index]`,
        headers: TenantHeader,
        body: Type.Array(CreateIpRule, { minItems: 1, maxItems: IP_BULK_MAX }),
        response: { 201: Type.Array(IpRule) },
      },
    },
    async (req, reply) => reply.status(201).send(await bulk.create(accountOf(req), req.body, callerOf(req))),
  );
};
