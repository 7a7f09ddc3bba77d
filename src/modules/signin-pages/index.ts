import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { SigninPagesDeps } from './deps.ts';
import { linksPagesRoutes } from './links.routes.ts';
import { loginRoutes } from './login.routes.ts';
import { logoutPagesRoutes } from './logout.routes.ts';
import { passwordlessPagesRoutes } from './passwordless.routes.ts';
import { recoveryPagesRoutes } from './recovery.routes.ts';
import { signupPagesRoutes } from './signup.routes.ts';

export type { SigninPagesDeps } from './deps.ts';
export { MFA_COOKIE, clientOf, failureText, finishSignIn, messagePage, statusOf } from './deps.ts';

/**
 * The hosted sign-in pages (/account/login, sign-up, recovery, the emailed links, logout): server-rendered forms over
 * the same services as the API's sign-in routes. Registered inside the page kit's scope (src/routes.ts).
 */
export const signinPagesRoutes: FastifyPluginAsyncTypebox<SigninPagesDeps> = async (app, deps) => {
  await app.register(loginRoutes, deps);
  await app.register(passwordlessPagesRoutes, deps);
  await app.register(signupPagesRoutes, deps);
  await app.register(recoveryPagesRoutes, deps);
  await app.register(linksPagesRoutes, deps);
  await app.register(logoutPagesRoutes, deps);
};
