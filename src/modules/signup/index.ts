export { createSignupService, type SignupService } from './service.ts';
export { signupRoutes } from './routes.ts';
export { activateByIdentityProvider } from './idp.ts';
// What other modules read of the users awaiting activation (lookups.ts).
export { awaitsActivation, signupTablesSql } from './lookups.ts';
