import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { guard, tenantHeader } from '../../http/auth.ts';
import { AppError } from '../../http/errors.ts';
import type { ApplicationsService } from './applications.ts';
import * as S from './applications-admin.schema.ts';
import { Application } from './schema.ts';

const tags = ['applications'];
const Empty = Type.Object({}, { description: 'empty object' });

/** The user a per-user route acts on: a user token's own user, or the gatehouse-user-id header of an environment call. */
function userOf(req: FastifyRequest): string {
  const a = req.auth!;
  if (a.kind === 'user') return a.userId;
  const h = req.headers['gatehouse-user-id'] ?? req.headers['frontegg-user-id'];
  const userId = (Array.isArray(h) ? h[0] : h)?.trim();
  if (!userId) throw new AppError('USER_HEADER_REQUIRED');
  return userId;
}

/** The account an assignment list is narrowed to: a user token's own account; for an environment call, the tenant header if sent. */
const scopeOf = (req: FastifyRequest): string | undefined =>
  req.auth?.kind === 'user' ? req.auth.tenantId : tenantHeader(req);

/**
 * One application (get, update, delete), account assignments, per-application active accounts and the multi-id
 * users-applications lookups (routes.md "Applications Settings", "Users-applications Management").
 */
export const applicationsAdminRoutes: FastifyPluginAsyncTypebox<{ applications: ApplicationsService }> = async (
  app,
  { applications },
) => {
  const admin = applications.admin;
  const A = '/applications/resources/applications/v1';
  app.get(
    `${A}/:id`,
    {
      config: guard.vendor,
      schema: { tags, summary: 'Get an application by id', params: S.AppIdParams, response: { 200: Application } },
    },
    async (req) => admin.get(req.params.id),
  );
  app.patch(
    `${A}/:id`,
    {
      config: guard.vendor,
      schema: {
        tags,
        summary:
          'Update an application (fields left out keep their value; isDefault: true moves the default here, the default cannot be unset)',
        params: S.AppIdParams,
        body: S.UpdateApplication,
        response: { 201: Application },
      },
    },
    async (req, reply) => reply.status(201).send(await admin.update(req.params.id, req.body)),
  );
  app.delete(
    `${A}/:id`,
    {
      config: guard.vendor,
      schema: {
        tags,
        summary:
          'Delete an application with its user and account assignments, credentials and clients (the default one: 409)',
        params: S.AppIdParams,
        response: { 200: Empty },
      },
    },
    async (req) => {
      await admin.remove(req.params.id);
      return {};
    },
  );

  const T = '/applications/resources/applications/tenant-assignments';
  app.get(
    `${T}/v1`,
    {
      config: guard.any(),
      schema: {
        tags,
        summary:
          'Applications of each account (filters: appIds, tenantIds, accessType; a user token or the tenant header: one account)',
        querystring: S.AssignmentsQuery,
        headers: S.TenantHeaders,
        response: { 200: Type.Array(S.TenantApps) },
      },
    },
    async (req) => admin.assignmentsV1(req.query, scopeOf(req)),
  );
  app.get(
    `${T}/v2`,
    {
      config: guard.any(),
      schema: {
        tags,
        summary: 'Applications of each account with the access type of each assignment (filters as v1)',
        querystring: S.AssignmentsQuery,
        headers: S.TenantHeaders,
        response: { 200: Type.Array(S.TenantAssignmentsV2) },
      },
    },
    async (req) => admin.assignmentsV2(req.query, scopeOf(req)),
  );
  app.get(
    `${T}/v1/:appId`,
    {
      config: guard.vendor,
      schema: {
        tags,
        summary: 'Accounts assigned to an application',
        params: S.AssignmentAppParams,
        response: { 200: S.AppTenants },
      },
    },
    async (req) => admin.tenantsOf(req.params.appId),
  );
  app.post(
    `${T}/v1/:appId`,
    {
      config: guard.vendor,
      schema: {
        tags,
        summary:
          "Assign an account to an application (idempotent; accessType defaults to the application's); answers the account's applications",
        params: S.AssignmentAppParams,
        body: S.CreateAssignment,
        response: { 201: S.TenantApps },
      },
    },
    async (req, reply) =>
      reply.status(201).send(await admin.assignTenant(req.params.appId, req.body.tenantId, req.body.accessType)),
  );
  app.put(
    `${T}/v1/:appId/:tenantId`,
    {
      config: guard.vendor,
      schema: {
        tags,
        summary: 'Change the access type of an account assignment',
        params: S.AssignmentParams,
        body: S.EditAssignment,
        response: { 200: S.Assignment },
      },
    },
    async (req) => admin.editTenant(req.params.appId, req.params.tenantId, req.body.accessType),
  );
  app.delete(
    `${T}/v1/:appId/:tenantId`,
    {
      config: guard.vendor,
      schema: { tags, summary: 'Remove an account assignment', params: S.AssignmentParams, response: { 200: Empty } },
    },
    async (req) => {
      await admin.unassignTenant(req.params.appId, req.params.tenantId);
      return {};
    },
  );

  const ACTIVE = '/identity/resources/applications/user-tenants/active/v1';
  app.get(
    ACTIVE,
    {
      config: guard.any(),
      schema: {
        tags,
        summary: "The user's active account in each application where one was set (a user token: its own user)",
        headers: S.UserHeaders,
        response: { 200: S.ActiveTenants },
      },
    },
    async (req) => admin.activeTenants(userOf(req)),
  );
  app.put(
    ACTIVE,
    {
      config: guard.identity({ recent: false }),
      schema: {
        tags,
        summary:
          "Switch the user's active account in applications (member of each account; MANAGED_ACCESS: the account must be assigned); all or nothing",
        headers: S.UserHeaders,
        body: S.ActiveTenantsBody,
        response: { 200: S.ActiveTenants },
      },
    },
    async (req) => admin.switchActiveTenants(userOf(req), req.body),
  );

  const UA = '/identity/resources/applications/v1';
  app.get(
    `${UA}/apps-users`,
    {
      config: guard.vendor,
      schema: {
        tags,
        summary: 'User ids of several applications (unknown ids are left out)',
        querystring: S.AppsUsersQuery,
        response: { 200: Type.Array(S.AppUsers) },
      },
    },
    async (req) => admin.usersOfApps(req.query.appIds),
  );
  app.get(
    `${UA}/users-apps`,
    {
      config: guard.vendor,
      schema: {
        tags,
        summary: 'Application ids of several users (unknown ids are left out)',
        querystring: S.UsersAppsQuery,
        response: { 200: Type.Array(S.UserApps) },
      },
    },
    async (req) => admin.appsOfUsers(req.query.userIds),
  );
};
