import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { guard } from '../../http/auth.ts';
import { AccountMigrationStatus, MigrateAccountsBody, MigrationCreated, MigrationParams } from './schema.ts';
import type { AccountMigrationService } from './service.ts';

const tags = ['account migration'];
const BASE = '/tenants/resources/migrations/v1/tenants';

export const accountMigrationRoutes: FastifyPluginAsyncTypebox<{ accountMigration: AccountMigrationService }> = async (
  app,
  { accountMigration },
) => {
  app.post(
    BASE,
    {
      config: guard.vendor,
      schema: {
        tags,
        summary: 'Migrate accounts: 1 to 1000 tenant ids or account objects, imported by a background job',
        body: MigrateAccountsBody,
        response: { 202: MigrationCreated },
      },
    },
    async (req, reply) => reply.status(202).send(await accountMigration.start(req.body.tenants)),
  );

  app.get(
    `${BASE}/status/:migrationId`,
    {
      config: guard.vendor,
      schema: {
        tags,
        summary: 'Progress and outcome of an account migration',
        params: MigrationParams,
        response: { 200: AccountMigrationStatus },
      },
    },
    async (req) => accountMigration.status(req.params.migrationId),
  );
};
