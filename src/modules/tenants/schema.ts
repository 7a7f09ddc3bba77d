import { Type, type Static } from 'typebox';

export const TENANT_ID_PATTERN = '^[A-Za-z0-9][A-Za-z0-9_.:@-]{0,254}$';
export const TenantId = Type.String({
  pattern: TENANT_ID_PATTERN,
  description: '1-255 characters: letters, digits, _ . : @ -',
});
export const AccessType = Type.Union([Type.Literal('defaultOff'), Type.Literal('defaultOn'), Type.Literal('alwaysOn')]);
export type AccessType = Static<typeof AccessType>;

const Text = (max = 2048) => Type.String({ maxLength: max });

/** An alias: the tenant id's characters; unique among live accounts regardless of case; null clears it. */
export const Alias = Type.Union([
  Type.String({ pattern: TENANT_ID_PATTERN, description: '1-255 characters: letters, digits, _ . : @ -' }),
  Type.Null(),
]);

/** The editable descriptive fields of an account (settings included). */
export const AccountFields = {
  name: Type.String({ minLength: 1, maxLength: 255 }),
  status: Text(64),
  website: Text(),
  applicationUrl: Text(),
  loginUrl: Text(),
  logo: Text(200_000),
  logoUrl: Text(),
  address: Text(),
  timezone: Text(64),
  dateFormat: Text(64),
  timeFormat: Text(64),
  currency: Text(16),
  creatorName: Text(255),
  creatorEmail: Text(320),
  isReseller: Type.Boolean(),
};
export const TEXT_FIELDS = [
  'name',
  'status',
  'website',
  'applicationUrl',
  'loginUrl',
  'logo',
  'logoUrl',
  'address',
  'timezone',
  'dateFormat',
  'timeFormat',
  'currency',
  'creatorName',
  'creatorEmail',
] as const;

/** Metadata: a JSON object, or a string holding one (as the User record carries it). */
export const MetadataInput = Type.Union([
  Type.Object({}, { additionalProperties: true }),
  Type.String({ maxLength: 65536 }),
]);

/** POST /tenants/v1: every field optional (routes.md); a missing name is the tenantId, as the account migration does. */
export const CreateAccount = Type.Object({
  tenantId: Type.Optional(TenantId),
  ...Type.Partial(Type.Object(AccountFields)).properties,
  alias: Type.Optional(Alias),
  parentTenantId: Type.Optional(TenantId),
  metadata: Type.Optional(MetadataInput),
});
export type CreateAccount = Static<typeof CreateAccount>;

export const UpdateAccount = Type.Partial(Type.Object({ ...AccountFields, alias: Alias, metadata: MetadataInput }), {
  minProperties: 1,
});
export type UpdateAccount = Static<typeof UpdateAccount>;

const Nullable = Type.Union([Type.String(), Type.Null()]);
export const Account = Type.Object({
  id: Type.String(),
  tenantId: Type.String(),
  name: Type.String(),
  alias: Nullable,
  metadata: Type.String({ description: 'stringified JSON object' }),
  isReseller: Type.Boolean(),
  subAccountAccessType: AccessType,
  parentTenantId: Nullable,
  status: Nullable,
  website: Nullable,
  applicationUrl: Nullable,
  loginUrl: Nullable,
  logo: Nullable,
  logoUrl: Nullable,
  address: Nullable,
  timezone: Nullable,
  dateFormat: Nullable,
  timeFormat: Nullable,
  currency: Nullable,
  creatorName: Nullable,
  creatorEmail: Nullable,
  createdAt: Type.String({ format: 'date-time' }),
  updatedAt: Type.String({ format: 'date-time' }),
  deletedAt: Nullable,
});
export type Account = Static<typeof Account>;

export const SORT_KEYS = ['createdAt', 'name', 'tenantId'] as const;
export const ListQuery = Type.Object({
  _limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 200, default: 50 })),
  _offset: Type.Optional(
    Type.Integer({ minimum: 0, maximum: 10_000_000, default: 0, description: 'page index, 0-based' }),
  ),
  _filter: Type.Optional(
    Type.String({ maxLength: 255, description: 'substring of the name or tenant id (case-insensitive)' }),
  ),
  _sortBy: Type.Optional(
    Type.Union(
      SORT_KEYS.map((k) => Type.Literal(k)),
      { default: 'createdAt' },
    ),
  ),
  _order: Type.Optional(Type.Union([Type.Literal('ASC'), Type.Literal('DESC')], { default: 'ASC' })),
  _tenantIds: Type.Optional(Type.String({ maxLength: 65536, description: 'comma-separated tenant ids' })),
});
export type ListQuery = Static<typeof ListQuery>;

export const AccountPage = Type.Object({
  items: Type.Array(Account),
  _metadata: Type.Object({ totalItems: Type.Integer(), totalPages: Type.Integer() }),
  _links: Type.Object({ next: Type.String(), prev: Type.String(), first: Type.String(), last: Type.String() }),
});

export const AliasParams = Type.Object({ alias: Type.String({ minLength: 1, maxLength: 255 }) });
export const TenantParams = Type.Object({ tenantId: Type.String({ minLength: 1, maxLength: 255 }) });
export const MetadataBody = Type.Object({
  metadata: Type.Object({}, { additionalProperties: true, description: 'keys to add or overwrite' }),
});
export const MetadataKeyParams = Type.Object({
  tenantId: Type.String({ minLength: 1, maxLength: 255 }),
  key: Type.String({ minLength: 1, maxLength: 255 }),
});
