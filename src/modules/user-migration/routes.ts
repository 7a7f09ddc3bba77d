import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { guard } from '../../http/auth.ts';
import { AppError } from '../../http/errors.ts';
import { MigrationCreated, MigrationParams } from '../account-migration/index.ts';
import { Empty, User } from '../users/index.ts';
import type { ApplicationsService } from './applications.ts';
import { applicationsAdminRoutes } from './applications-admin.routes.ts';
import { applicationCredentialsRoutes } from './application-credentials.routes.ts';
import { IDP_FETCH_JOB, SUPPORTED_PROVIDERS } from './idp.ts';
import {
  Application,
  ApplicationsQuery,
  AssignUsersBody,
  BulkBody,
  CreateApplication,
  ExtIdpBody,
  MigrateUserBody,
  ProviderParams,
  UserMigrationStatus,
} from './schema.ts';
import type { UserMigrationService } from './service.ts';

const tags = ['user migration'];
const M = '/identity/resources/migrations/v1';
const Status = Type.Object({
  ...UserMigrationStatus.properties,
  failureReason: Type.Optional(Type.String({ description: 'why a failed migration failed' })),
});
const Assigned = Type.Array(
  Type.Object({
    appId: Type.String(),
    userTenantId: Type.String(),
    userId: Type.String(),
    tenantId: Type.String(),
    createdAt: Type.String(),
  }),
);
const IdParams = Type.Object({ id: Type.String({ maxLength: 64 }) });

export const userMigrationRoutes: FastifyPluginAsyncTypebox<{
  userMigration: UserMigrationService;
  applications: ApplicationsService;
}> = async (app, { userMigration, applications }) => {
  app.post(
    `${M}/local`,
    {
      config: guard.vendor,
      schema: {
        tags,
        summary: 'Migrate one user (imported password hash, roles, phone, MFA secret); answers the User',
        body: MigrateUserBody,
        response: { 201: User },
      },
    },
    async (req, reply) => reply.status(201).send(await userMigration.migrateOne(req.body)),
  );

  // v2 ("Migrate Vendor Users in Bulk") takes the same body and answers the same: one operation under two paths.
  for (const path of [`${M}/local/bulk`, '/identity/resources/migrations/v2/local/bulk']) {
    app.post(
      path,
      {
        config: guard.vendor,
        schema: {
          tags,
          summary: 'Migrate 1 to 1000 users; a durable job imports them (poll the status)',
          body: BulkBody,
          response: { 202: MigrationCreated },
        },
      },
      async (req, reply) => reply.status(202).send(await userMigration.startBulk(req.body.users)),
    );
  }

  app.get(
    `${M}/local/bulk/status/:migrationId`,
    {
      config: guard.vendor,
      schema: {
        tags,
        summary: 'Progress and outcome of a user migration (bulk or from a provider)',
        params: MigrationParams,
        response: { 200: Status },
      },
    },
    async (req) => userMigration.status(req.params.migrationId),
  );

  app.post(
    `${M}/:provider`,
    {
      config: guard.vendor,
      schema: {
        tags,
        summary: 'Migrate every user of a third-party identity provider (auth0) as a background job',
        params: ProviderParams,
        body: ExtIdpBody,
        response: { 201: MigrationCreated },
      },
    },
    async (req, reply) => {
      const provider = req.params.provider.toLowerCase();
      if (!(SUPPORTED_PROVIDERS as readonly string[]).includes(provider)) {
        throw new AppError(
          'UNSUPPORTED_PROVIDER',
          `Provider ${req.params.provider.slice(0, 64)} is not supported; supported: ${SUPPORTED_PROVIDERS.join(', ')}`,
        );
      }
      const { domain, clientId, secret, tenantIdFieldName, isTenantIdOnUserMetadata } = req.body;
      return reply.status(201).send(
        await userMigration.startFromProvider(provider, IDP_FETCH_JOB, {
          domain,
          clientId,
          secret,
          tenantIdFieldName,
          isTenantIdOnUserMetadata: isTenantIdOnUserMetadata ?? false,
        }),
      );
    },
  );

  // Applications (kept small: list, create, default) and users-applications management (routes.md).
  const A = '/applications/resources/applications/v1';
  app.get(
    A,
    {
      config: guard.vendor,
      schema: {
        tags: ['applications'],
        summary: 'Applications of the environment, filtered by access type, default, active, ids (comma list) and type',
        querystring: ApplicationsQuery,
        response: { 200: Type.Array(Application) },
      },
    },
    async (req) => applications.list(req.query),
  );
  app.get(
    `${A}/default`,
    {
      config: guard.vendor,
      schema: { tags: ['applications'], summary: 'The default application', response: { 200: Application } },
    },
    async () => applications.default(),
  );
  app.post(
    A,
    {
      config: guard.vendor,
      schema: {
        tags: ['applications'],
        summary: 'Create an application (isDefault moves the default; autoAssign: migrated users get it)',
        body: CreateApplication,
        response: { 201: Application },
      },
    },
    async (req, reply) => reply.status(201).send(await applications.create(req.body)),
  );

  const UA = '/identity/resources/applications/v1';
  for (const path of [UA, `${UA}/apps-user`]) {
    app.post(
      path,
      {
        config: guard.vendor,
        schema: {
          tags: ['applications'],
          summary: 'Assign users of an account to an application',
          body: AssignUsersBody,
          response: { 201: Assigned },
        },
      },
      async (req, reply) => reply.status(201).send(await applications.assign(req.body)),
    );
  }
  for (const path of [UA, `${UA}/user-apps`]) {
    app.delete(
      path,
      {
        config: guard.vendor,
        schema: {
          tags: ['applications'],
          summary: 'Unassign users of an account from an application',
          body: AssignUsersBody,
          response: { 200: Empty },
        },
      },
      async (req, reply) => {
        await applications.unassign(req.body);
        return reply.status(200).send({});
      },
    );
  }
  app.get(
    `${UA}/:id/users`,
    {
      config: guard.vendor,
      schema: {
        tags: ['applications'],
        summary: 'User ids of an application',
        params: IdParams,
        response: { 200: Type.Array(Type.String()) },
      },
    },
    async (req) => applications.usersOf(req.params.id),
  );
  // One application, account assignments, active accounts, credentials and clients: their own files.
  await app.register(applicationsAdminRoutes, { applications });
  await app.register(applicationCredentialsRoutes, { applications });
  app.get(
    `${UA}/:id/apps`,
    {
      config: guard.vendor,
      schema: {
        tags: ['applications'],
        summary: 'Application ids of a user',
        params: IdParams,
        response: { 200: Type.Array(Type.String()) },
      },
    },
    async (req) => applications.appsOf(req.params.id),
  );
};
