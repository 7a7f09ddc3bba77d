import type { Queryable } from '../../storage/db.ts';
import type { Configuration, Step } from './schema.ts';

export interface FlowRow {
  id: string;
  tenant_id: string | null;
  name: string;
  description: string;
  is_active: boolean;
  is_step_up: boolean;
  channels: { email: boolean; sms: boolean };
  configuration: Configuration;
  steps: Step[];
  created_at: Date;
  updated_at: Date;
}

/** What an execution keeps of its flow when it starts. */
export interface FlowSnapshot {
  name: string;
  description: string;
  configuration: Configuration;
  steps: Step[];
}

export interface ExecutionRow {
  id: string;
  flow_id: string | null;
  tenant_id: string | null;
  requester_id: string;
  requester: string;
  flow: FlowSnapshot;
  execution_data: Record<string, unknown> | null;
  webhook_url: string | null;
  current_step: number;
  status: string;
  created_at: Date;
  completed_at: Date | null;
}

export interface ActionRow {
  step_id: string;
  approver_id: string;
  approved: boolean;
  created_at: Date;
}

/** Flows visible in a scope: with a tenant, that account's and the environment-wide ones; without, all. */
export async function listFlows(q: Queryable, tenantId: string | undefined): Promise<FlowRow[]> {
  const { rows } = await q.query<FlowRow>(
    `SELECT * FROM approval_flows WHERE $1::text IS NULL OR tenant_id IS NULL OR tenant_id = $1 ORDER BY created_at, id`,
    [tenantId ?? null],
  );
  return rows;
}

export async function findFlow(q: Queryable, id: string, lock = false): Promise<FlowRow | undefined> {
  const { rows } = await q.query<FlowRow>(`SELECT * FROM approval_flows WHERE id = $1${lock ? ' FOR UPDATE' : ''}`, [
    id,
  ]);
  return rows[0];
}

export async function insertFlow(q: Queryable, r: Omit<FlowRow, 'created_at' | 'updated_at'>): Promise<void> {
  await q.query(
    `INSERT INTO approval_flows (id, tenant_id, name, description, is_active, is_step_up, channels, configuration, steps)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
    [
      r.id,
      r.tenant_id,
      r.name,
      r.description,
      r.is_active,
      r.is_step_up,
      JSON.stringify(r.channels),
      JSON.stringify(r.configuration),
      JSON.stringify(r.steps),
    ],
  );
}

export async function updateFlow(
  q: Queryable,
  r: Omit<FlowRow, 'created_at' | 'updated_at' | 'tenant_id'>,
): Promise<void> {
  await q.query(
    `UPDATE approval_flows SET name = $2, description = $3, is_active = $4, is_step_up = $5, channels = $6, configuration = $7,
       steps = $8, updated_at = now() WHERE id = $1`,
    [
      r.id,
      r.name,
      r.description,
      r.is_active,
      r.is_step_up,
      JSON.stringify(r.channels),
      JSON.stringify(r.configuration),
      JSON.stringify(r.steps),
    ],
  );
}

export async function deleteFlow(q: Queryable, id: string): Promise<void> {
  await q.query(`DELETE FROM approval_flows WHERE id = $1`, [id]);
}

export async function insertExecution(
  q: Queryable,
  r: Pick<
    ExecutionRow,
    'id' | 'flow_id' | 'tenant_id' | 'requester_id' | 'requester' | 'flow' | 'execution_data' | 'webhook_url'
  >,
): Promise<void> {
  await q.query(
    `INSERT INTO approval_flow_executions (id, flow_id, tenant_id, requester_id, requester, flow, execution_data, webhook_url)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
    [
      r.id,
      r.flow_id,
      r.tenant_id,
      r.requester_id,
      r.requester,
      JSON.stringify(r.flow),
      r.execution_data === null ? null : JSON.stringify(r.execution_data),
      r.webhook_url,
    ],
  );
}

export async function findExecution(q: Queryable, id: string, lock = false): Promise<ExecutionRow | undefined> {
  const { rows } = await q.query<ExecutionRow>(
    `SELECT * FROM approval_flow_executions WHERE id = $1${lock ? ' FOR UPDATE' : ''}`,
    [id],
  );
  return rows[0];
}

export async function setExecutionState(
  q: Queryable,
  id: string,
  currentStep: number,
  status: string,
  completedAt: Date | null,
): Promise<void> {
  await q.query(`UPDATE approval_flow_executions SET current_step = $2, status = $3, completed_at = $4 WHERE id = $1`, [
    id,
    currentStep,
    status,
    completedAt,
  ]);
}

export async function actionsOf(q: Queryable, executionId: string): Promise<ActionRow[]> {
  const { rows } = await q.query<ActionRow>(
    `SELECT step_id, approver_id, approved, created_at FROM approval_flow_actions WHERE execution_id = $1 ORDER BY created_at, approver_id`,
    [executionId],
  );
  return rows;
}

/** Records an approver's action; false when that approver already acted on that step. */
export async function insertAction(
  q: Queryable,
  executionId: string,
  stepId: string,
  approverId: string,
  approved: boolean,
): Promise<boolean> {
  const { rows } = await q.query(
    `INSERT INTO approval_flow_actions (execution_id, step_id, approver_id, approved) VALUES ($1, $2, $3, $4)
     ON CONFLICT DO NOTHING RETURNING 1 AS ok`,
    [executionId, stepId, approverId, approved],
  );
  return rows.length === 1;
}
