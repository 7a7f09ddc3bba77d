import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { meFactorsRoutes } from './me-factors.routes.ts';
import { meRoutes } from './me.routes.ts';
import { mfaPageRoutes } from './mfa.routes.ts';
import { stepUpPageRoutes } from './step-up.routes.ts';
import type { AccountPagesDeps } from './shared.ts';

/** The hosted MFA step of a sign-in (/account/mfa) and the "my account" page (/account/me), in the pages scope. */
export const accountPagesRoutes: FastifyPluginAsyncTypebox<AccountPagesDeps> = async (app, deps) => {
  await app.register(mfaPageRoutes, deps);
  await app.register(meRoutes, deps);
  await app.register(meFactorsRoutes, deps);
  await app.register(stepUpPageRoutes, deps);
};
