import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { guard } from '../../http/auth.ts';
import {
  IdParams,
  ListQuery,
  Targeting,
  TargetingBody,
  Template,
  TemplateBody,
  TemplatePage,
  TemplatePatch,
} from './schema.ts';
import type { JwtTemplatesService } from './service.ts';

const tags = ['jwt templates'];
const T = '/identity/resources/jwt-templates/v1';
const G = '/identity/resources/configurations/v1/jwt-template-targeting';

export const jwtTemplatesRoutes: FastifyPluginAsyncTypebox<{ jwtTemplates: JwtTemplatesService }> = async (
  app,
  { jwtTemplates },
) => {
  app.post(
    T,
    {
      config: guard.vendor,
      schema: {
        tags,
        summary: 'Create a JWT template (claims and lifetime of the user access tokens a targeting rule applies it to)',
        body: TemplateBody,
        response: { 201: Template },
      },
    },
    async (req, reply) => reply.status(201).send(await jwtTemplates.create(req.body)),
  );
  app.get(
    T,
    {
      config: guard.vendor,
      schema: { tags, summary: 'List JWT templates', querystring: ListQuery, response: { 200: TemplatePage } },
    },
    async (req) => jwtTemplates.list(req.query, T),
  );
  app.get(
    `${T}/:id`,
    {
      config: guard.vendor,
      schema: { tags, summary: 'Get a JWT template', params: IdParams, response: { 200: Template } },
    },
    async (req) => jwtTemplates.get(req.params.id),
  );
  app.put(
    `${T}/:id`,
    {
      config: guard.vendor,
      schema: {
        tags,
        summary: 'Update a JWT template (omitted fields keep their value); a key named by a targeting rule stays',
        params: IdParams,
        body: TemplatePatch,
        response: { 200: Template },
      },
    },
    async (req) => jwtTemplates.update(req.params.id, req.body),
  );
  app.delete(
    `${T}/:id`,
    {
      config: guard.vendor,
      schema: { tags, summary: 'Delete a JWT template no targeting rule names', params: IdParams },
    },
    async (req, reply) => {
      await jwtTemplates.remove(req.params.id);
      return reply.status(204).send();
    },
  );

  app.get(
    G,
    {
      config: guard.vendor,
      schema: {
        tags,
        summary: 'Get the JWT template targeting rules (404 when none were set)',
        response: { 200: Targeting },
      },
    },
    async () => jwtTemplates.targeting(),
  );
  app.post(
    G,
    {
      config: guard.vendor,
      schema: {
        tags,
        summary: 'Create the JWT template targeting rules, tried in order (409 when they exist)',
        body: TargetingBody,
        response: { 201: Targeting },
      },
    },
    async (req, reply) => reply.status(201).send(await jwtTemplates.createTargeting(req.body)),
  );
  app.put(
    G,
    {
      config: guard.vendor,
      schema: {
        tags,
        summary: 'Replace the JWT template targeting rules, creating them when none exist',
        body: TargetingBody,
        response: { 200: Targeting },
      },
    },
    async (req) => jwtTemplates.putTargeting(req.body),
  );
  app.patch(
    `${G}/:id`,
    {
      config: guard.vendor,
      schema: {
        tags,
        summary: 'Replace the rules of the JWT template targeting configuration `id`',
        params: IdParams,
        body: TargetingBody,
        response: { 200: Targeting },
      },
    },
    async (req) => jwtTemplates.patchTargeting(req.params.id, req.body),
  );
  app.delete(
    `${G}/:id`,
    {
      config: guard.vendor,
      schema: { tags, summary: 'Delete the JWT template targeting configuration `id`', params: IdParams },
    },
    async (req) => {
      await jwtTemplates.removeTargeting(req.params.id);
      return {};
    },
  );
};
