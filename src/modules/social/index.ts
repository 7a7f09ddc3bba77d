export { createSocialService, type SocialService, type SocialBody } from './service.ts';
export { socialRoutes } from './routes.ts';
export { PROVIDERS } from './providers.ts';
