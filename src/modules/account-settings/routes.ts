import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import { accountOf, guard, tenantHeader } from '../../http/auth.ts';
import { AppError } from '../../http/errors.ts';
import { AccountSettings, PublicSettings, TenantHeaders, UpdateSettings } from './schema.ts';
import type { AccountSettingsService } from './service.ts';

const tags = ['account settings'];
const V1 = '/tenants/resources/account-settings/v1';

/** The public route's account: the tenant header first, else the active account of a user token that was sent. */
function publicAccountOf(req: FastifyRequest): string {
  const header = tenantHeader(req);
  if (header) return header;
  if (req.auth?.kind === 'user') return req.auth.tenantId;
  throw new AppError(
    'TENANT_HEADER_REQUIRED',
    'Header gatehouse-tenant-id (or a user token) is required to choose the account',
  );
}

export const accountSettingsRoutes: FastifyPluginAsyncTypebox<{ accountSettings: AccountSettingsService }> = async (
  app,
  { accountSettings },
) => {
  app.get(
    V1,
    {
      config: guard.any('fe.account-settings.read'),
      schema: {
        tags,
        summary: "Get the account's settings (user token: its account; environment token: the tenant header)",
        headers: TenantHeaders,
        response: { 200: AccountSettings },
      },
    },
    async (req) => accountSettings.get(accountOf(req)),
  );

  app.put(
    V1,
    {
      config: guard.any('fe.account-settings.write'),
      // An absent or null body is an empty update (EMPTY_UPDATE), not a type error.
      preValidation: async (req) => {
        req.body ??= {};
      },
      schema: {
        tags,
        summary: "Update the account's settings; at least one setting; null clears a setting",
        headers: TenantHeaders,
        body: UpdateSettings,
        response: { 200: AccountSettings },
      },
    },
    async (req) => accountSettings.update(accountOf(req), req.body),
  );

  app.get(
    `${V1}/public`,
    {
      config: guard.optional,
      schema: {
        tags,
        summary: 'Get the public settings of an account (no token needed; the tenant header chooses the account)',
        headers: TenantHeaders,
        response: { 200: PublicSettings },
      },
    },
    async (req) => accountSettings.getPublic(publicAccountOf(req)),
  );
};
