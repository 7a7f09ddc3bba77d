import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { guard } from '../../http/auth.ts';
import * as S from './rebac.schema.ts';
import type { RebacService } from './rebac.service.ts';

const T = '/entitlements/resources/entity-types/v1';
const A = '/entitlements/resources/relations/v1';
const tags = ['entitlements'];

/** ReBAC management (routes.md: entity-types/v1, relations/v1) and Gatehouse's own check route. Vendor token only. */
export const rebacRoutes: FastifyPluginAsyncTypebox<{ rebac: RebacService }> = async (app, { rebac: r }) => {
  const config = guard.vendor;

  // -- entity types --
  app.get(
    T,
    {
      config,
      schema: {
        tags,
        summary: 'List entity types (ReBAC)',
        querystring: S.PageQuery,
        response: { 200: S.EntityTypePage },
      },
    },
    (req) => r.listTypes(req.query),
  );
  app.post(
    T,
    {
      config,
      schema: {
        tags,
        summary: 'Create an entity type (key unique)',
        body: S.CreateEntityType,
        response: { 201: S.EntityTypeDto },
      },
    },
    async (req, reply) => reply.status(201).send(await r.createType(req.body)),
  );
  app.get(
    `${T}/:key`,
    {
      config,
      schema: {
        tags,
        summary: 'Get an entity type with its relation and action keys',
        params: S.TypeParams,
        response: { 200: S.EntityTypeOneDto },
      },
    },
    (req) => r.getType(req.params.key),
  );
  app.patch(
    `${T}/:key`,
    {
      config,
      schema: {
        tags,
        summary: 'Update an entity type (a new key renames it everywhere)',
        params: S.TypeParams,
        body: S.UpdateEntityType,
        response: { 200: S.EntityTypeDto },
      },
    },
    (req) => r.updateType(req.params.key, req.body),
  );
  app.delete(
    `${T}/:key`,
    {
      config,
      schema: {
        tags,
        summary:
          'Delete an entity type with its relations and actions (409 while other types or assignments reference it)',
        params: S.TypeParams,
        response: { 204: S.NoContent('entity type deleted') },
      },
    },
    async (req, reply) => {
      await r.removeType(req.params.key);
      return reply.status(204).send(null);
    },
  );

  // -- actions of an entity type --
  app.post(
    `${T}/:key/actions`,
    {
      config,
      schema: {
        tags,
        summary: 'Create actions of an entity type (all or none); each is granted by any of its relations',
        params: S.TypeParams,
        body: S.CreateActions,
        response: { 201: Type.Array(S.ActionDto) },
      },
    },
    async (req, reply) => reply.status(201).send(await r.createActions(req.params.key, req.body.actions)),
  );
  app.patch(
    `${T}/:key/actions/:actionKey`,
    {
      config,
      schema: {
        tags,
        summary: 'Update an action (a new key renames it; relationKeys replaces its relations)',
        params: S.ActionParams,
        body: S.UpdateAction,
        response: { 200: S.ActionDto },
      },
    },
    (req) => r.updateAction(req.params.key, req.params.actionKey, req.body),
  );
  app.delete(
    `${T}/:key/actions/:actionKey`,
    {
      config,
      schema: {
        tags,
        summary: 'Delete an action',
        params: S.ActionParams,
        response: { 204: S.NoContent('action deleted') },
      },
    },
    async (req, reply) => {
      await r.removeAction(req.params.key, req.params.actionKey);
      return reply.status(204).send(null);
    },
  );

  // -- relations of an entity type (the type is the target) --
  app.post(
    `${T}/:key/relations`,
    {
      config,
      schema: {
        tags,
        summary: 'Create relations of an entity type (all or none) with the subject types that may hold them',
        params: S.TypeParams,
        body: S.CreateRelations,
        response: { 201: Type.Array(S.RelationDto) },
      },
    },
    async (req, reply) => reply.status(201).send(await r.createRelations(req.params.key, req.body.relations)),
  );
  app.patch(
    `${T}/:key/relations/:relationKey`,
    {
      config,
      schema: {
        tags,
        summary: 'Update a relation (a new key renames it in actions and assignments)',
        params: S.RelationParams,
        body: S.UpdateRelation,
        response: { 200: S.RelationDto },
      },
    },
    (req) => r.updateRelation(req.params.key, req.params.relationKey, req.body),
  );
  app.delete(
    `${T}/:key/relations/:relationKey`,
    {
      config,
      schema: {
        tags,
        summary: 'Delete a relation (409 while actions list it or assignments use it)',
        params: S.RelationParams,
        response: { 204: S.NoContent('relation deleted') },
      },
    },
    async (req, reply) => {
      await r.removeRelation(req.params.key, req.params.relationKey);
      return reply.status(204).send(null);
    },
  );

  // -- relation assignments --
  app.get(
    `${A}/assignments`,
    {
      config,
      schema: {
        tags,
        summary: 'List relation assignments in creation order (optional filters on each key)',
        querystring: S.AssignmentQuery,
        response: { 200: S.AssignmentPage },
      },
    },
    (req) => r.listAssignments(req.query),
  );
  app.post(
    `${A}/assign`,
    {
      config,
      schema: {
        tags,
        summary: 'Assign relations (all or none; the same five keys again replace the window)',
        body: S.AssignBody,
        response: { 201: Type.Array(S.AssignmentDto) },
      },
    },
    async (req, reply) => reply.status(201).send(await r.assign(req.body.assignments)),
  );
  app.post(
    `${A}/unassign`,
    {
      config,
      schema: {
        tags,
        summary: 'Remove relation assignments by their five keys (absent ones are skipped)',
        body: S.AssignBody,
        response: { 204: S.NoContent('assignments removed') },
      },
    },
    async (req, reply) => {
      await r.unassign(req.body.assignments);
      return reply.status(204).send(null);
    },
  );
  app.post(
    `${A}/check`,
    {
      config,
      schema: {
        tags,
        summary: 'Gatehouse ReBAC check: may the subject do the action on the target now (or at `at`)?',
        body: S.CheckBody,
        response: { 200: S.CheckAnswer },
      },
    },
    (req) => r.check(req.body),
  );
};
