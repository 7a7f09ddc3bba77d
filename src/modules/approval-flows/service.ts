import { newId } from '../../lib/crypto.ts';
import { AppError } from '../../http/errors.ts';
import type { Db, Queryable } from '../../storage/db.ts';
import type { EventKey, EventsService } from '../events/index.ts';
import type { UsersService } from '../users/index.ts';
import type {
  ApproverAction,
  Configuration,
  CreateFlow,
  ExecuteBody,
  Execution,
  ExecutionStatus,
  Flow,
  Step,
  StepInput,
  UpdateFlow,
} from './schema.ts';
import * as store from './store.ts';

export interface ApprovalFlowsDeps {
  db: Db;
  events: EventsService;
  users: Pick<UsersService, 'get'>;
  /** The environment id, answered as `vendorId`. */
  vendorId: () => string;
  now?: () => Date;
}

/** Events of this module (docs/events.md); emitted only once the events catalogue lists them. */
const REQUESTED: EventKey = 'approval.requested';
const COMPLETED: EventKey = 'approval.completed';

const bad = (field: string, rule: string) => new AppError('VALIDATION', `${field} ${rule}`, { field });
const iso = (d: Date) => new Date(d).toISOString();

function checkUrl(field: string, url: string | undefined): void {
  if (url === undefined) return;
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    throw bad(field, 'must be an absolute http(s) URL');
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') throw bad(field, 'must be an absolute http(s) URL');
}

/** Steps as stored: checked selectors, unique orders, sorted, each with a new id. */
function buildSteps(inputs: StepInput[]): Step[] {
  const steps = inputs.map((s, i): Step => {
    const sel = s.approverSelector;
    const at = `steps[${i}].approverSelector`;
    const list = sel.type === 'users' ? sel.userIds : sel.roleKeys;
    const name = sel.type === 'users' ? 'userIds' : 'roleKeys';
    if (!list?.length) throw bad(`${at}.${name}`, `must list at least one entry when type is ${sel.type}`);
    if (new Set(list).size !== list.length) throw bad(`${at}.${name}`, 'must not repeat an entry');
    const requiredApprovals = s.requiredApprovals ?? 1;
    if (sel.type === 'users' && requiredApprovals > list.length)
      throw bad(`steps[${i}].requiredApprovals`, 'must not exceed the number of userIds');
    const approverSelector =
      sel.type === 'users' ? { type: sel.type, userIds: list } : { type: sel.type, roleKeys: list };
    return { id: newId(), order: s.order ?? i + 1, approverSelector, requiredApprovals };
  });
  const orders = new Set(steps.map((s) => s.order));
  if (orders.size !== steps.length) throw bad('steps[].order', 'must be unique within the flow');
  return steps.sort((a, b) => a.order - b.order);
}

function checkConfiguration(c: Configuration): void {
  checkUrl('configuration.webhookUrl', c.webhookUrl);
}

/**
 * The outcome a deadline gives a pending execution at `now` (timeout → expired, auto-approve → approved), counted from
 * the execution's start; when both have passed, the earlier deadline wins. Undefined while no deadline has passed.
 */
export function deadlineOutcome(
  row: Pick<store.ExecutionRow, 'status' | 'created_at' | 'flow'>,
  now: Date,
): { status: ExecutionStatus; at: Date } | undefined {
  if (row.status !== 'pending') return undefined;
  const start = new Date(row.created_at).getTime();
  const { timeoutMinutes, autoApproveInMinutes } = row.flow.configuration;
  const due: { status: ExecutionStatus; at: Date }[] = [];
  if (timeoutMinutes) due.push({ status: 'expired', at: new Date(start + timeoutMinutes * 60_000) });
  if (autoApproveInMinutes) due.push({ status: 'approved', at: new Date(start + autoApproveInMinutes * 60_000) });
  return due.filter((d) => d.at.getTime() <= now.getTime()).sort((a, b) => a.at.getTime() - b.at.getTime())[0];
}

export function createApprovalFlowsService(deps: ApprovalFlowsDeps) {
  const { db, events, users } = deps;
  const now = deps.now ?? (() => new Date());

  const out = (r: store.FlowRow): Flow => ({
    id: r.id,
    vendorId: deps.vendorId(),
    ...(r.tenant_id ? { tenantId: r.tenant_id } : {}),
    name: r.name,
    description: r.description,
    isActive: r.is_active,
    isStepUp: r.is_step_up,
    channels: r.channels,
    configuration: r.configuration,
    steps: r.steps,
    createdAt: iso(r.created_at),
    updatedAt: iso(r.updated_at),
  });

  async function emit(
    q: Queryable,
    key: EventKey,
    row: store.ExecutionRow,
    data: Record<string, unknown>,
  ): Promise<void> {
    await events.emit(q, {
      eventKey: key,
      tenantId: row.tenant_id,
      entity: { type: 'approval_flow_execution', id: row.id },
      data,
    });
  }

  /** The approvers of the execution's current step are asked (docs/events.md `approval.requested`). */
  async function notifyStep(q: Queryable, row: store.ExecutionRow): Promise<void> {
    const step = row.flow.steps[row.current_step];
    await emit(q, REQUESTED, row, {
      approvalFlowExecutionId: row.id,
      approvalFlowId: row.flow_id,
      approvalFlowName: row.flow.name,
      approvalFlowStepId: step.id,
      approverSelector: step.approverSelector,
      requesterId: row.requester_id,
      requester: row.requester,
    });
  }

  /** The execution ends: stored, and announced with the webhook URL to deliver it to (execution's, else the flow's). */
  async function finish(q: Queryable, row: store.ExecutionRow, status: ExecutionStatus, at: Date): Promise<void> {
    await store.setExecutionState(q, row.id, row.current_step, status, at);
    row.status = status;
    row.completed_at = at;
    await emit(q, COMPLETED, row, {
      approvalFlowExecutionId: row.id,
      approvalFlowId: row.flow_id,
      status,
      requesterId: row.requester_id,
      webhookUrl: row.webhook_url ?? row.flow.configuration.webhookUrl ?? null,
      executionData: row.execution_data ?? {},
    });
  }

  /** The execution, locked, with a passed deadline applied and stored. */
  async function settled(tx: Queryable, id: string): Promise<store.ExecutionRow> {
    const row = await store.findExecution(tx, id, true);
    if (!row) throw new AppError('APPROVAL_EXECUTION_NOT_FOUND', `No approval flow execution with id ${id}`);
    const due = deadlineOutcome(row, now());
    if (due) await finish(tx, row, due.status, due.at);
    return row;
  }

  async function requireFlow(
    q: Queryable,
    id: string,
    tenantId: string | undefined,
    exact: boolean,
    lock = false,
  ): Promise<store.FlowRow> {
    const row = await store.findFlow(q, id, lock);
    const visible = row && (!tenantId || row.tenant_id === tenantId || (!exact && row.tenant_id === null));
    if (!row || !visible)
      throw new AppError(
        'APPROVAL_FLOW_NOT_FOUND',
        `No approval flow with id ${id}${tenantId ? ` in account ${tenantId}` : ''}`,
      );
    return row;
  }

  /** Whether `approverId` approves `step` in the execution's account (role holders checked through the users module). */
  async function approves(step: Step, approverId: string, tenantId: string | null): Promise<boolean> {
    const sel = step.approverSelector;
    if (sel.type === 'users') return sel.userIds?.includes(approverId) ?? false;
    try {
      const user = await users.get(approverId, tenantId ?? undefined);
      return user.roles.some((r) => sel.roleKeys?.includes(r.key));
    } catch (err) {
      if (err instanceof AppError && err.status === 404) return false;
      throw err;
    }
  }

  /** The step of an execution that `approverId` may see or act on; 404 (`hide`) or 403 otherwise. */
  async function approverStep(
    row: store.ExecutionRow,
    stepId: string,
    approverId: string,
    hide: boolean,
  ): Promise<Step> {
    const step = row.flow.steps.find((s) => s.id === stepId);
    const allowed = step && approverId !== row.requester_id && (await approves(step, approverId, row.tenant_id));
    if (step && allowed) return step;
    if (hide) throw new AppError('APPROVAL_EXECUTION_NOT_FOUND', 'No such execution step for this approver');
    if (!step) throw new AppError('APPROVAL_EXECUTION_NOT_FOUND', `The execution has no step ${stepId}`);
    throw new AppError(
      'NOT_AN_APPROVER',
      approverId === row.requester_id
        ? 'The requester may not approve their own request'
        : `User ${approverId} is not an approver of step ${stepId}`,
    );
  }

  async function start(flow: store.FlowRow, requesterId: string, tenantId: string | undefined, body: ExecuteBody) {
    if (!flow.is_active) throw new AppError('CONFLICT', `Approval flow ${flow.id} is not active`);
    checkUrl('webhookUrl', body.webhookUrl);
    const account = tenantId ?? flow.tenant_id ?? undefined;
    const requester = await users.get(requesterId, account);
    const row: store.ExecutionRow = {
      id: newId(),
      flow_id: flow.id,
      tenant_id: account ?? null,
      requester_id: requesterId,
      requester: requester.email,
      flow: { name: flow.name, description: flow.description, configuration: flow.configuration, steps: flow.steps },
      execution_data: body.executionData ?? null,
      webhook_url: body.webhookUrl ?? null,
      current_step: 0,
      status: 'pending',
      created_at: now(),
      completed_at: null,
    };
    await db.transaction(async (tx) => {
      await store.insertExecution(tx, row);
      await notifyStep(tx, row);
    });
    return { approvalFlowExecutionId: row.id, status: 'pending' as const };
  }

  return {
    async create(tenantId: string | undefined, body: CreateFlow): Promise<Flow> {
      checkConfiguration(body.configuration);
      const id = newId();
      await db.transaction(async (tx) => {
        await store.insertFlow(tx, {
          id,
          tenant_id: tenantId ?? null,
          name: body.name,
          description: body.description ?? '',
          is_active: body.isActive ?? true,
          is_step_up: body.isStepUp ?? false,
          channels: body.channels,
          configuration: body.configuration,
          steps: buildSteps(body.steps),
        });
      });
      return out((await store.findFlow(db, id))!);
    },
    async list(tenantId: string | undefined): Promise<{ items: Flow[] }> {
      return { items: (await store.listFlows(db, tenantId)).map(out) };
    },
    async get(id: string, tenantId: string | undefined): Promise<Flow> {
      return out(await requireFlow(db, id, tenantId, false));
    },
    async update(id: string, tenantId: string | undefined, body: UpdateFlow): Promise<Flow> {
      if (body.configuration) checkConfiguration(body.configuration);
      const steps = body.steps ? buildSteps(body.steps) : undefined;
      await db.transaction(async (tx) => {
        const cur = await requireFlow(tx, id, tenantId, true, true);
        await store.updateFlow(tx, {
          id,
          name: body.name ?? cur.name,
          description: body.description ?? cur.description,
          is_active: body.isActive ?? cur.is_active,
          is_step_up: body.isStepUp ?? cur.is_step_up,
          channels: body.channels ?? cur.channels,
          configuration: body.configuration ?? cur.configuration,
          steps: steps ?? cur.steps,
        });
      });
      return out((await store.findFlow(db, id))!);
    },
    async remove(id: string, tenantId: string | undefined): Promise<void> {
      await db.transaction(async (tx) => {
        await requireFlow(tx, id, tenantId, true, true);
        await store.deleteFlow(tx, id);
      });
    },

    async execute(id: string, requesterId: string, tenantId: string | undefined, body: ExecuteBody) {
      return start(await requireFlow(db, id, tenantId, false), requesterId, tenantId, body);
    },
    /**
     * Step-up: the active flow marked `isStepUp` in scope (the account's own before an environment-wide one); when
     * none is marked, the only active flow in scope. None: 404; several equally eligible: 409.
     */
    async executeStepUp(requesterId: string, tenantId: string | undefined, body: ExecuteBody) {
      const active = (await store.listFlows(db, tenantId)).filter((f) => f.is_active);
      const marked = active.filter((f) => f.is_step_up);
      const pool = marked.length ? marked : active;
      const own = tenantId ? pool.filter((f) => f.tenant_id === tenantId) : [];
      const candidates = own.length ? own : pool;
      if (!candidates.length)
        throw new AppError('APPROVAL_FLOW_NOT_FOUND', 'No active approval flow for step-up in this scope');
      if (candidates.length > 1)
        throw new AppError('CONFLICT', 'Several active approval flows could run step-up: mark one with isStepUp');
      return start(candidates[0], requesterId, tenantId, body);
    },

    /** `actor`: with a user token, the approver must be the caller. */
    async act(a: ApproverAction, actor?: string) {
      if (actor !== undefined && actor !== a.approverId)
        throw new AppError('NOT_AN_APPROVER', 'A user token may act only as its own user (approverId)');
      const pre = await store.findExecution(db, a.approvalFlowExecutionId);
      if (!pre)
        throw new AppError(
          'APPROVAL_EXECUTION_NOT_FOUND',
          `No approval flow execution with id ${a.approvalFlowExecutionId}`,
        );
      await approverStep(pre, a.approvalFlowStepId, a.approverId, false);
      return db.transaction(async (tx) => {
        const row = await settled(tx, a.approvalFlowExecutionId);
        const index = row.flow.steps.findIndex((s) => s.id === a.approvalFlowStepId);
        if (row.status !== 'pending')
          throw new AppError('APPROVAL_ALREADY_DECIDED', `The execution is already ${row.status}`);
        if (index < row.current_step)
          throw new AppError('APPROVAL_ALREADY_DECIDED', `Step ${a.approvalFlowStepId} is already approved`);
        if (index > row.current_step)
          throw new AppError(
            'CONFLICT',
            `Step ${a.approvalFlowStepId} is not open yet: an earlier step awaits approval`,
          );
        if (!(await store.insertAction(tx, row.id, a.approvalFlowStepId, a.approverId, a.approved))) {
          throw new AppError(
            'APPROVAL_ALREADY_DECIDED',
            `Approver ${a.approverId} already acted on step ${a.approvalFlowStepId}`,
          );
        }
        const at = now();
        if (!a.approved) await finish(tx, row, 'rejected', at);
        else {
          const step = row.flow.steps[index];
          const approvals = (await store.actionsOf(tx, row.id)).filter(
            (x) => x.step_id === step.id && x.approved,
          ).length;
          if (approvals >= step.requiredApprovals) {
            if (index === row.flow.steps.length - 1) await finish(tx, row, 'approved', at);
            else {
              row.current_step = index + 1;
              await store.setExecutionState(tx, row.id, row.current_step, 'pending', null);
              await notifyStep(tx, row);
            }
          }
        }
        const current = row.status === 'pending' ? row.flow.steps[row.current_step].id : undefined;
        return {
          approvalFlowExecutionId: row.id,
          status: row.status as ExecutionStatus,
          ...(current ? { currentStepId: current } : {}),
        };
      });
    },

    async executionData(
      q: { approvalFlowExecutionId: string; approverId: string; approvalFlowStepId: string },
      actor?: string,
    ) {
      const hidden = () => new AppError('APPROVAL_EXECUTION_NOT_FOUND', 'No such execution step for this approver');
      if (actor !== undefined && actor !== q.approverId) throw hidden();
      const row = await store.findExecution(db, q.approvalFlowExecutionId);
      if (!row) throw hidden();
      await approverStep(row, q.approvalFlowStepId, q.approverId, true);
      return {
        approvalFlowName: row.flow.name,
        approvalFlowDescription: row.flow.description,
        requester: row.requester,
        approvalFlowRequestDate: iso(row.created_at),
        executionData: row.execution_data ?? {},
      };
    },

    /** Gatehouse: one execution with its state (a passed deadline applied) and the approvers' actions per step. */
    async execution(id: string, tenantId: string | undefined): Promise<Execution> {
      const { row, actions } = await db.transaction(async (tx) => {
        const r = await settled(tx, id);
        return { row: r, actions: await store.actionsOf(tx, id) };
      });
      if (tenantId && row.tenant_id !== tenantId)
        throw new AppError('APPROVAL_EXECUTION_NOT_FOUND', `No approval flow execution with id ${id}`);
      return {
        id: row.id,
        approvalFlowId: row.flow_id,
        tenantId: row.tenant_id,
        requesterId: row.requester_id,
        status: row.status as ExecutionStatus,
        currentStepId: row.status === 'pending' ? row.flow.steps[row.current_step].id : null,
        webhookUrl: row.webhook_url,
        createdAt: iso(row.created_at),
        completedAt: row.completed_at ? iso(row.completed_at) : null,
        steps: row.flow.steps.map((s) => ({
          id: s.id,
          order: s.order,
          requiredApprovals: s.requiredApprovals,
          actions: actions
            .filter((x) => x.step_id === s.id)
            .map((x) => ({ approverId: x.approver_id, approved: x.approved, createdAt: iso(x.created_at) })),
        })),
      };
    },
  };
}

export type ApprovalFlowsService = ReturnType<typeof createApprovalFlowsService>;
