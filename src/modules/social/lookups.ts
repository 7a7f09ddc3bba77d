// What other modules' statements may read of the social providers, as SQL expressions: never a client secret.

/** The types of the active providers, sorted (text[], empty when none): what a login box offers. */
export const ACTIVE_PROVIDER_TYPES_SQL = `coalesce((SELECT array_agg(type ORDER BY type) FROM social_providers WHERE active),
  '{}'::text[])`;
