import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { guard } from '../../http/auth.ts';
import { PublicConfig, RecoveryStrategies, VendorConfigBasic } from './login-box.schema.ts';
import type { EnvironmentService } from './service.ts';

const C = '/identity/resources/configurations/v1';
const tags = ['environment'];

/**
 * What login boxes read before anyone signs in (no token), and the vendor's basic configuration. The password-recovery
 * strategies live here, beside the other configuration reads, because they depend on the messaging configuration,
 * which the recovery module's routes have no access to.
 */
export const loginBoxRoutes: FastifyPluginAsyncTypebox<{ environment: EnvironmentService }> = async (
  app,
  { environment },
) => {
  app.get(
    `${C}/public`,
    {
      config: guard.public,
      schema: {
        tags,
        summary:
          'The public sign-in configuration for login boxes: sign-up, sign-in methods, SSO, social providers, MFA factors, captcha site key (no secrets)',
        response: { 200: PublicConfig },
      },
    },
    async () => environment.loginBox.publicConfig(),
  );

  app.get(
    `${C}/basic`,
    {
      config: guard.vendor,
      schema: {
        tags,
        summary: 'Basic identity configuration: forcePermissions and the machine-to-machine authentication strategy',
        response: { 200: VendorConfigBasic },
      },
    },
    async () => environment.loginBox.basic(),
  );

  app.get(
    `${C}/password-recovery/strategies`,
    {
      config: guard.public,
      schema: {
        tags,
        summary:
          'Password recovery methods a login box may offer: emailed link, SMS code (on when enabled and deliverable)',
        response: { 200: RecoveryStrategies },
      },
    },
    async () => environment.loginBox.recoveryStrategies(),
  );
};
