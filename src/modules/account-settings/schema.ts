import { Type, type Static } from 'typebox';

/** Length limits, shared by the body schema (early 400) and the service's own checks. */
export const LIMITS = {
  url: 2048,
  logo: 200_000,
  address: 2048,
  timezone: 64,
  format: 64,
  name: 255,
} as const;

const Nullable = Type.Union([Type.String(), Type.Null()]);
const Settable = (maxLength: number, description: string) =>
  Type.Union([Type.String({ maxLength }), Type.Null()], { description });

/** GET and PUT answer: the account's settings, null where unset. */
export const AccountSettings = Type.Object({
  tenantId: Type.String(),
  applicationUrl: Nullable,
  loginUrl: Nullable,
  address: Nullable,
  timezone: Nullable,
  dateFormat: Nullable,
  timeFormat: Nullable,
  currency: Nullable,
  logo: Nullable,
});
export type AccountSettings = Static<typeof AccountSettings>;

/** The public subset: what a login page may read without a token. */
export const PublicSettings = Type.Object({
  tenantId: Type.String(),
  applicationUrl: Nullable,
  loginUrl: Nullable,
});
export type PublicSettings = Static<typeof PublicSettings>;

/**
 * PUT body: any of the settings plus `name`. null (or an empty string) clears a setting; `name` cannot be cleared.
 * Unknown fields are dropped by the validator (additionalProperties: false with removeAdditional), so a body of
 * unknown fields only is an empty update. The finer rules (URL, IANA zone, currency) are checked in the service.
 */
export const UpdateSettings = Type.Object(
  {
    name: Type.Optional(
      Type.Union([Type.String({ maxLength: LIMITS.name }), Type.Null()], {
        description: 'account name, 1-255 characters; cannot be cleared',
      }),
    ),
    applicationUrl: Type.Optional(Settable(LIMITS.url, 'absolute http(s) URL')),
    loginUrl: Type.Optional(Settable(LIMITS.url, 'absolute http(s) URL')),
    address: Type.Optional(Settable(LIMITS.address, 'free text')),
    timezone: Type.Optional(Settable(LIMITS.timezone, 'IANA time zone, e.g. Europe/Berlin or UTC')),
    dateFormat: Type.Optional(Settable(LIMITS.format, 'display pattern, e.g. dd/MM/yyyy')),
    timeFormat: Type.Optional(Settable(LIMITS.format, 'display pattern, e.g. HH:mm')),
    currency: Type.Optional(Settable(16, 'ISO 4217 code: 3 upper-case letters, e.g. EUR')),
    logo: Type.Optional(Settable(LIMITS.logo, 'http(s) URL or data:image/...;base64 URL')),
  },
  { additionalProperties: false },
);
export type UpdateSettings = Static<typeof UpdateSettings>;

export const TenantHeaders = Type.Object({
  'gatehouse-tenant-id': Type.Optional(
    Type.String({
      description:
        'the account (alias: frontegg-tenant-id); GET and PUT read it with an environment token only, a user token acts on its own account',
    }),
  ),
});
