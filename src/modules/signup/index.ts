export { createSignupService, type SignupService } from './service.ts';
export { signupRoutes } from './routes.ts';
export { activateByIdentityProvider } from './idp.ts';
