export { createUserPoolsService, type UserPoolsService } from './service.ts';
export { userPoolsRoutes } from './routes.ts';
export { BUILT_IN_ID as BUILT_IN_USER_SOURCE_ID } from './schema.ts';
