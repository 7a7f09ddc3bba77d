export { createSocialService, type SocialService, type SocialBody } from './service.ts';
export { socialRoutes } from './routes.ts';
export { PROVIDERS } from './providers.ts';
// What other modules' statements read of the providers, as SQL expressions (lookups.ts).
export { ACTIVE_PROVIDER_TYPES_SQL } from './lookups.ts';
