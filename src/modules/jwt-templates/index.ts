export {
  createJwtTemplatesService,
  JWT_TEMPLATES_CACHE_MS,
  type JwtTemplatesService,
  type TemplateFacts,
  type TokenTemplate,
} from './service.ts';
export { jwtTemplatesRoutes } from './routes.ts';
export { RESERVED_CLAIMS } from './claims.ts';
