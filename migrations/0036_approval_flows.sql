-- Approval flows (routes.md "Approval Flows", /identity/resources/approval-flows/v1): a flow is a list of steps, each
-- approved by users or by holders of roles; an execution is one request running through a snapshot of the flow's
-- steps, taken when it starts (a later PATCH does not change running executions). Timeouts and auto-approval are
-- evaluated when an execution is read or acted on (no timers): see docs/decisions.md, "Approval flow deadlines".
CREATE TABLE approval_flows (
  id             uuid PRIMARY KEY,
  -- NULL: environment-wide; else the account the flow belongs to (the tenant header at create).
  tenant_id      text,
  name           text NOT NULL,
  description    text NOT NULL DEFAULT '',
  is_active      boolean NOT NULL DEFAULT true,
  is_step_up     boolean NOT NULL DEFAULT false,
  channels       jsonb NOT NULL,
  configuration  jsonb NOT NULL,
  steps          jsonb NOT NULL,
  created_at     timestamptz NOT NULL DEFAULT now(),
  updated_at     timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX approval_flows_scope ON approval_flows (tenant_id, created_at);

CREATE TABLE approval_flow_executions (
  id              uuid PRIMARY KEY,
  -- The flow may be deleted later: the execution keeps its own snapshot (name, description, steps, configuration).
  flow_id         uuid REFERENCES approval_flows (id) ON DELETE SET NULL,
  tenant_id       text,
  requester_id    text NOT NULL,
  requester       text NOT NULL,
  flow            jsonb NOT NULL,
  execution_data  jsonb,
  webhook_url     text,
  current_step    integer NOT NULL DEFAULT 0,
  -- pending | approved | rejected | expired (stored once settled; a pending row past a deadline reads as settled)
  status          text NOT NULL DEFAULT 'pending',
  created_at      timestamptz NOT NULL DEFAULT now(),
  completed_at    timestamptz
);
CREATE INDEX approval_flow_executions_flow ON approval_flow_executions (flow_id, created_at);

CREATE TABLE approval_flow_actions (
  execution_id  uuid NOT NULL REFERENCES approval_flow_executions (id) ON DELETE CASCADE,
  step_id       text NOT NULL,
  approver_id   text NOT NULL,
  approved      boolean NOT NULL,
  created_at    timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (execution_id, step_id, approver_id)
);
