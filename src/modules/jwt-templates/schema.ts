import { Type, type Static } from 'typebox';
import { PageEnvelopeOf } from '../../http/paging.ts';

/** Longest access-token lifetime a template may set: the environment's own maximum (a day). */
export const MAX_EXPIRATION = 86_400;

const Claims = Type.Record(Type.String(), Type.Unknown(), {
  description:
    'claim name → constant, or a string with {{reference}}s: {{sub}}, {{sid}}, {{type}}, {{aud}}, {{applicationId}}, {{user.id}}, {{user.email}}, {{user.name}}, {{user.verified}}, {{user.profilePictureUrl}}, {{user.metadata}}, {{user.metadata.<key>}}, {{user.tenantId}}, {{user.tenantIds}}, {{user.tenant.roles}}, {{user.tenant.permissions}}',
});
const Algorithm = Type.Union([Type.Literal('RS256'), Type.Literal('HS256')], {
  description: 'RS256: signed with the environment signing key (public keys at /.well-known/jwks.json)',
});
const Key = Type.String({ minLength: 1, maxLength: 100, pattern: '^[A-Za-z0-9_.:-]+$' });
const Name = Type.String({ minLength: 1, maxLength: 200 });
const Description = Type.String({ maxLength: 1000 });
const Expiration = Type.Integer({
  minimum: 1,
  maximum: MAX_EXPIRATION,
  description: 'access-token lifetime in seconds',
});

export const TemplateBody = Type.Object({
  key: Key,
  name: Name,
  description: Type.Optional(Description),
  expiration: Expiration,
  algorithm: Algorithm,
  templateSchema: Type.Object({ claims: Claims }),
});
export type TemplateBody = Static<typeof TemplateBody>;

export const TemplatePatch = Type.Object({
  key: Type.Optional(Key),
  name: Type.Optional(Name),
  description: Type.Optional(Description),
  expiration: Type.Optional(Expiration),
  algorithm: Type.Optional(Algorithm),
  templateSchema: Type.Optional(Type.Object({ claims: Claims })),
});
export type TemplatePatch = Static<typeof TemplatePatch>;

export const Template = Type.Object({
  id: Type.String(),
  vendorId: Type.String(),
  key: Type.String(),
  name: Type.String(),
  description: Type.String(),
  expiration: Type.Integer(),
  algorithm: Type.String(),
  templateSchema: Type.Object({ claims: Claims }),
  createdAt: Type.String({ format: 'date-time' }),
  updatedAt: Type.String({ format: 'date-time' }),
});
export type Template = Static<typeof Template>;

const SortBy = ['id', 'key', 'name', 'createdAt', 'updatedAt'] as const;
export const ListQuery = Type.Object({
  keys: Type.Optional(Type.Array(Type.String({ maxLength: 100 }), { maxItems: 200 })),
  ids: Type.Optional(Type.Array(Type.String({ maxLength: 64 }), { maxItems: 200 })),
  _limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 200, default: 50 })),
  _offset: Type.Optional(Type.Integer({ minimum: 0, default: 0, description: 'a 0-based page index' })),
  _sortBy: Type.Optional(
    Type.Union(
      SortBy.map((s) => Type.Literal(s)),
      { default: 'createdAt' },
    ),
  ),
  _order: Type.Optional(Type.Union([Type.Literal('ASC'), Type.Literal('DESC')], { default: 'ASC' })),
});
export type ListQuery = Static<typeof ListQuery>;
export const TemplatePage = PageEnvelopeOf(Template);

export const IdParams = Type.Object({ id: Type.String({ minLength: 1, maxLength: 64 }) });

const Condition = Type.Object({
  attribute: Type.String({
    minLength: 1,
    maxLength: 50,
    description: 'tenantId, applicationId, userId, email or roleId',
  }),
  op: Type.String({ minLength: 1, maxLength: 30, description: 'in_list, starts_with, ends_with, contains or matches' }),
  value: Type.Record(Type.String(), Type.Unknown(), { description: '{list: string[]} or, for matches, {string}' }),
  negate: Type.Optional(Type.Boolean()),
});
const Rule = Type.Object({
  conditionLogic: Type.Literal('and'),
  conditions: Type.Array(Condition),
  treatment: Type.String({ minLength: 1, maxLength: 100, description: 'the key of the JWT template to apply' }),
});
export const TargetingBody = Type.Object({ rules: Type.Optional(Type.Array(Rule)) });
export type TargetingBody = Static<typeof TargetingBody>;

export const Targeting = Type.Object({
  id: Type.String(),
  createdAt: Type.String({ format: 'date-time' }),
  updatedAt: Type.String({ format: 'date-time' }),
  targeting: Type.Object({ rules: Type.Array(Rule) }),
});
export type Targeting = Static<typeof Targeting>;
