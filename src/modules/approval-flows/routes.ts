import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { guard, tenantHeader } from '../../http/auth.ts';
import { AppError } from '../../http/errors.ts';
import {
  ActionResult,
  ApproverAction,
  CreateFlow,
  ExecuteBody,
  ExecuteHeaders,
  Executed,
  Execution,
  ExecutionData,
  ExecutionDataQuery,
  Flow,
  FlowList,
  FlowParams,
  UpdateFlow,
} from './schema.ts';
import type { ApprovalFlowsService } from './service.ts';

const tags = ['approval flows'];
export const APPROVAL_FLOWS_PATH = '/identity/resources/approval-flows/v1';
const P = APPROVAL_FLOWS_PATH;

/** The requester and account of an execute call: a user token's own; with an environment token, the headers. */
function requesterOf(req: FastifyRequest): { userId: string; tenantId: string | undefined } {
  if (req.auth?.kind === 'user') return { userId: req.auth.userId, tenantId: req.auth.tenantId };
  const h = req.headers['gatehouse-user-id'] ?? req.headers['frontegg-user-id'];
  const userId = (Array.isArray(h) ? h[0] : h)?.trim();
  if (!userId)
    throw new AppError('VALIDATION', 'Header gatehouse-user-id is required: the user who requests the approval', {
      field: 'gatehouse-user-id',
    });
  return { userId, tenantId: tenantHeader(req) };
}
/** With a user token, the approver is the caller. */
const actorOf = (req: FastifyRequest) => (req.auth?.kind === 'user' ? req.auth.userId : undefined);

export const approvalFlowsRoutes: FastifyPluginAsyncTypebox<{ approvalFlows: ApprovalFlowsService }> = async (
  app,
  { approvalFlows },
) => {
  app.post(
    P,
    {
      config: guard.vendor,
      schema: {
        tags,
        summary: 'Create an approval flow (the tenant header scopes it to that account)',
        body: CreateFlow,
        response: { 200: Flow },
      },
    },
    async (req) => approvalFlows.create(tenantHeader(req), req.body),
  );

  app.get(
    P,
    {
      config: guard.vendor,
      schema: {
        tags,
        summary: "Get the approval flows (with the tenant header: that account's and the environment-wide ones)",
        response: { 200: FlowList },
      },
    },
    async (req) => approvalFlows.list(tenantHeader(req)),
  );

  app.get(
    `${P}/execution-data`,
    {
      config: guard.any(),
      schema: {
        tags,
        summary: 'Get what an approver of the step is asked to approve (404 to anyone else)',
        querystring: ExecutionDataQuery,
        response: { 200: ExecutionData },
      },
    },
    async (req) => approvalFlows.executionData(req.query, actorOf(req)),
  );

  app.post(
    `${P}/approver-action`,
    {
      config: guard.any(),
      schema: {
        tags,
        summary: 'Approve or reject the current step of an execution, as one of its approvers',
        body: ApproverAction,
        response: { 200: ActionResult },
      },
    },
    async (req) => approvalFlows.act(req.body, actorOf(req)),
  );

  app.post(
    `${P}/step-up/execute`,
    {
      config: guard.any(),
      schema: {
        tags,
        summary: 'Start the step-up approval flow for the requester',
        headers: ExecuteHeaders,
        body: Type.Optional(ExecuteBody),
        response: { 200: Executed },
      },
    },
    async (req) => {
      const r = requesterOf(req);
      return approvalFlows.executeStepUp(r.userId, r.tenantId, req.body ?? {});
    },
  );

  app.get(
    `${P}/executions/:id`,
    {
      config: guard.vendor,
      schema: {
        tags,
        summary: "Get an execution with its status and the approvers' actions (Gatehouse)",
        params: FlowParams,
        response: { 200: Execution },
      },
    },
    async (req) => approvalFlows.execution(req.params.id, tenantHeader(req)),
  );

  app.get(
    `${P}/:id`,
    {
      config: guard.vendor,
      schema: { tags, summary: 'Get an approval flow', params: FlowParams, response: { 200: Flow } },
    },
    async (req) => approvalFlows.get(req.params.id, tenantHeader(req)),
  );

  app.patch(
    `${P}/:id`,
    {
      config: guard.vendor,
      schema: {
        tags,
        summary: 'Update an approval flow (running executions keep the steps they started with)',
        params: FlowParams,
        body: UpdateFlow,
        response: { 200: Flow },
      },
    },
    async (req) => approvalFlows.update(req.params.id, tenantHeader(req), req.body),
  );

  app.delete(
    `${P}/:id`,
    {
      config: guard.vendor,
      schema: {
        tags,
        summary: 'Delete an approval flow (its executions are kept)',
        params: FlowParams,
        response: { 204: Type.Null() },
      },
    },
    async (req, reply) => {
      await approvalFlows.remove(req.params.id, tenantHeader(req));
      return reply.status(204).send(null);
    },
  );

  app.post(
    `${P}/:id/execute`,
    {
      config: guard.any(),
      schema: {
        tags,
        summary: "Start an execution of the flow for the requester; the first step's approvers are asked",
        params: FlowParams,
        headers: ExecuteHeaders,
        body: Type.Optional(ExecuteBody),
        response: { 200: Executed },
      },
    },
    async (req) => {
      const r = requesterOf(req);
      return approvalFlows.execute(req.params.id, r.userId, r.tenantId, req.body ?? {});
    },
  );
};
