export { createOidcService, type OidcService, type OidcDeps, type OpenIdClient } from './service.ts';
export { mountProvider, oidcHandoff, oidcUserInfoRoutes } from './routes.ts';
export { oidcInteractionRoutes } from './interactions.ts';
export { oidcPurgeRules } from './purge.ts';
