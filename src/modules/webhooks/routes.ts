import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { guard } from '../../http/auth.ts';
import {
  Delivery,
  DeliveryParams,
  ListWebhooksQuery,
  LogsPage,
  LogsQuery,
  TestResult,
  Webhook,
  WebhookParams,
  webhookBodies,
} from './schema.ts';
import type { WebhooksService } from './service.ts';

const tags = ['webhooks'];

/** Webhook endpoints (wire.md section 10), environment (vendor) tokens only. */
export const webhooksRoutes: FastifyPluginAsyncTypebox<{ webhooks: WebhooksService }> = async (app, { webhooks }) => {
  const { CreateWebhook, UpdateWebhook } = webhookBodies(webhooks.eventKeys);
  app.post(
    '/webhook/custom',
    {
      config: guard.vendor,
      schema: {
        tags,
        summary: "Create a webhook endpoint (environment-wide, or one account's with tenantId)",
        body: CreateWebhook,
        response: { 201: Webhook },
      },
    },
    async (req, reply) => reply.status(201).send(await webhooks.create(req.body)),
  );

  app.get(
    '/webhook',
    {
      config: guard.vendor,
      schema: {
        tags,
        summary: "List webhook endpoints (tenantId: one account's only)",
        querystring: ListWebhooksQuery,
        response: { 200: Type.Array(Webhook) },
      },
    },
    async (req) => webhooks.list(req.query.tenantId),
  );

  app.get(
    '/webhook/:id',
    {
      config: guard.vendor,
      schema: { tags, summary: 'Get a webhook endpoint', params: WebhookParams, response: { 200: Webhook } },
    },
    async (req) => webhooks.get(req.params.id),
  );

  app.patch(
    '/webhook/:id',
    {
      config: guard.vendor,
      schema: {
        tags,
        summary: 'Update a webhook endpoint (a new secret applies to the next attempt)',
        params: WebhookParams,
        body: UpdateWebhook,
        response: { 200: Webhook },
      },
    },
    async (req) => webhooks.update(req.params.id, req.body),
  );

  app.delete(
    '/webhook/:id',
    {
      config: guard.vendor,
      schema: {
        tags,
        summary: 'Delete a webhook endpoint and its delivery log',
        params: WebhookParams,
        response: { 204: Type.Null({ description: 'webhook endpoint deleted' }) },
      },
    },
    async (req, reply) => {
      await webhooks.remove(req.params.id);
      return reply.status(204).send(null);
    },
  );

  app.get(
    '/webhook/:id/logs',
    {
      config: guard.vendor,
      schema: {
        tags,
        summary: 'Deliveries of the endpoint, newest first: status, attempts, response code and (truncated) body',
        params: WebhookParams,
        querystring: LogsQuery,
        response: { 200: LogsPage },
      },
    },
    async (req) => webhooks.logs(req.params.id, req.query),
  );

  app.post(
    '/webhook/:id/test',
    {
      config: guard.vendor,
      schema: {
        tags,
        summary: "Send a signed webhook.test event now and answer the receiver's response",
        params: WebhookParams,
        response: { 200: TestResult },
      },
    },
    async (req) => webhooks.test(req.params.id),
  );

  app.post(
    '/webhook/:id/logs/:deliveryId/replay',
    {
      config: guard.vendor,
      schema: {
        tags,
        summary: 'Send a delivery again (same event id and body, new delivery row)',
        params: DeliveryParams,
        response: { 202: Delivery },
      },
    },
    async (req, reply) => reply.status(202).send(await webhooks.replay(req.params.id, req.params.deliveryId)),
  );
};
