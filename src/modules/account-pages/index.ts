export { accountPagesRoutes } from './routes.ts';
export { localReturnTo, MFA_COOKIE, type AccountPagesDeps } from './shared.ts';
