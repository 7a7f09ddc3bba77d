import { Type, type Static } from 'typebox';
import { PageEnvelopeOf } from '../../http/paging.ts';

const DateTime = Type.String({ format: 'date-time' });
const StrategyT = Type.Union([Type.Literal('ALLOW'), Type.Literal('BLOCK')]);

// ---- IP restrictions ----

export const IpConfig = Type.Object({
  strategy: StrategyT,
  isActive: Type.Boolean({ description: 'enforced at sign-in and token refresh when true' }),
});
export const IpConfigBody = Type.Object({
  strategy: Type.Optional(StrategyT),
  isActive: Type.Optional(Type.Boolean()),
});
export type IpConfigBody = Static<typeof IpConfigBody>;

export const IpRule = Type.Object({
  id: Type.String(),
  ip: Type.String({ description: 'canonical address or CIDR range' }),
  description: Type.String(),
  strategy: StrategyT,
  isActive: Type.Boolean(),
  createdAt: DateTime,
  updatedAt: DateTime,
});
export type IpRule = Static<typeof IpRule>;
export const CreateIpRule = Type.Object({
  ip: Type.String({
    minLength: 1,
    maxLength: 64,
    description: 'IPv4 or IPv6 address, or CIDR range (203.0.113.0/24, 2001:db8::/32)',
  }),
  description: Type.Optional(Type.String({ maxLength: 1024 })),
  strategy: StrategyT,
  isActive: Type.Optional(Type.Boolean({ default: true })),
});
export type CreateIpRule = Static<typeof CreateIpRule>;
export const IpListQuery = Type.Object({
  _limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 200, default: 50 })),
  _offset: Type.Optional(Type.Integer({ minimum: 0, maximum: 10_000_000, default: 0, description: 'page index' })),
  _filter: Type.Optional(Type.String({ maxLength: 255, description: 'substring of the address or the description' })),
});
export type IpListQuery = Static<typeof IpListQuery>;
export const IpVerify = Type.Object({
  ip: Type.String({ description: "the caller's address as the server sees it" }),
  valid: Type.Boolean({
    description:
      '/verify: a sign-in from here would be admitted; /verify/allow: the address is on the active allow list',
  }),
  isActive: Type.Boolean(),
  strategy: StrategyT,
  matchedRuleId: Type.Union([Type.String(), Type.Null()]),
});
export const IdParams = Type.Object({ id: Type.String({ minLength: 1, maxLength: 64 }) });

// ---- email-domain restrictions ----

export const DomainConfig = Type.Object({
  active: Type.Boolean(),
  listType: StrategyT,
  blockPublicDomains: Type.Boolean(),
});
export const DomainConfigBody = Type.Object({
  active: Type.Boolean(),
  blockPublicDomains: Type.Optional(Type.Boolean()),
  type: Type.Optional(StrategyT),
});
export type DomainConfigBody = Static<typeof DomainConfigBody>;
const Domain = Type.String({
  minLength: 1,
  maxLength: 255,
  description: 'email domain, e.g. acme.com (subdomains match too)',
});
export const DomainRule = Type.Object({ id: Type.String(), domain: Type.String(), type: StrategyT });
export const CreateDomainRule = Type.Object({ domain: Domain, type: StrategyT });
export type CreateDomainRule = Static<typeof CreateDomainRule>;
export const ReplaceDomains = Type.Object({ type: StrategyT, domains: Type.Array(Domain, { maxItems: 1000 }) });
export type ReplaceDomains = Static<typeof ReplaceDomains>;
export const DomainListQuery = Type.Object({
  _limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000, default: 200 })),
  _offset: Type.Optional(Type.Integer({ minimum: 0, maximum: 10_000_000, default: 0, description: 'page index' })),
});

export const TenantHeader = Type.Object({
  'gatehouse-tenant-id': Type.Optional(
    Type.String({ description: 'the account (alias: frontegg-tenant-id); a user token acts on its own account' }),
  ),
});

export const IpRulePage = PageEnvelopeOf(IpRule);
export const DomainRulePage = PageEnvelopeOf(DomainRule);
