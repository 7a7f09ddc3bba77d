import { Type, type Static } from 'typebox';

export const STATUSES = ['pending', 'approved', 'rejected', 'expired'] as const;
export type ExecutionStatus = (typeof STATUSES)[number];
const Status = Type.Union([
  Type.Literal('pending'),
  Type.Literal('approved'),
  Type.Literal('rejected'),
  Type.Literal('expired'),
]);

const Id = Type.String({ minLength: 1, maxLength: 128 });
const Minutes = Type.Number({ exclusiveMinimum: 0, maximum: 525600, description: 'minutes (at most one year)' });

export const Channels = Type.Object({ email: Type.Boolean(), sms: Type.Boolean() }, { additionalProperties: false });

export const Configuration = Type.Object(
  {
    autoApproveInMinutes: Type.Optional(Minutes),
    reminderIntervalMinutes: Type.Optional(Minutes),
    notifyOnDecisions: Type.Optional(Type.Boolean()),
    timeoutMinutes: Type.Optional(Minutes),
    webhookUrl: Type.Optional(Type.String({ minLength: 1, maxLength: 2048 })),
  },
  { additionalProperties: false },
);
export type Configuration = Static<typeof Configuration>;

/** Who approves a step: listed users, or any user holding one of the listed role keys in the execution's account. */
export const ApproverSelector = Type.Object(
  {
    type: Type.Union([Type.Literal('users'), Type.Literal('roles')]),
    userIds: Type.Optional(Type.Array(Id, { maxItems: 100 })),
    roleKeys: Type.Optional(Type.Array(Id, { maxItems: 100 })),
  },
  { additionalProperties: false },
);

export const StepInput = Type.Object(
  {
    approverSelector: ApproverSelector,
    /** Approvals that complete the step (default 1). */
    requiredApprovals: Type.Optional(Type.Integer({ minimum: 1, maximum: 100 })),
    /** Position of the step (default: its index + 1); unique within the flow. */
    order: Type.Optional(Type.Integer({ minimum: 0, maximum: 1000 })),
  },
  { additionalProperties: false },
);
export type StepInput = Static<typeof StepInput>;

export const Step = Type.Object({
  id: Type.String(),
  order: Type.Integer(),
  approverSelector: ApproverSelector,
  requiredApprovals: Type.Integer(),
});
export type Step = Static<typeof Step>;

const Steps = Type.Array(StepInput, { minItems: 1, maxItems: 20 });
const Name = Type.String({ minLength: 1, maxLength: 255 });
const Description = Type.String({ maxLength: 2000 });

export const CreateFlow = Type.Object(
  {
    name: Name,
    description: Type.Optional(Description),
    isActive: Type.Optional(Type.Boolean()),
    /** Gatehouse: the flow POST /step-up/execute runs (one active per scope). */
    isStepUp: Type.Optional(Type.Boolean()),
    channels: Channels,
    configuration: Configuration,
    steps: Steps,
  },
  { additionalProperties: false },
);
export type CreateFlow = Static<typeof CreateFlow>;

export const UpdateFlow = Type.Object(
  {
    name: Type.Optional(Name),
    description: Type.Optional(Description),
    isActive: Type.Optional(Type.Boolean()),
    isStepUp: Type.Optional(Type.Boolean()),
    channels: Type.Optional(Channels),
    configuration: Type.Optional(Configuration),
    steps: Type.Optional(Steps),
  },
  { additionalProperties: false, minProperties: 1 },
);
export type UpdateFlow = Static<typeof UpdateFlow>;

export const Flow = Type.Object({
  id: Type.String(),
  vendorId: Type.String(),
  tenantId: Type.Optional(Type.String()),
  name: Type.String(),
  description: Type.String(),
  isActive: Type.Boolean(),
  isStepUp: Type.Boolean(),
  channels: Channels,
  configuration: Configuration,
  steps: Type.Array(Step),
  createdAt: Type.String({ format: 'date-time' }),
  updatedAt: Type.String({ format: 'date-time' }),
});
export type Flow = Static<typeof Flow>;
export const FlowList = Type.Object({ items: Type.Array(Flow) });
export const FlowParams = Type.Object({ id: Type.String({ format: 'uuid' }) });

export const ExecuteHeaders = Type.Object({
  'gatehouse-tenant-id': Type.Optional(Type.String({ maxLength: 128 })),
  'gatehouse-user-id': Type.Optional(
    Type.String({ maxLength: 128, description: 'required with an environment token: the requester' }),
  ),
});
export const ExecuteBody = Type.Object(
  {
    executionData: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
    webhookUrl: Type.Optional(Type.String({ minLength: 1, maxLength: 2048 })),
  },
  { additionalProperties: false },
);
export type ExecuteBody = Static<typeof ExecuteBody>;
export const Executed = Type.Object({ approvalFlowExecutionId: Type.String(), status: Type.Literal('pending') });

const ExecutionId = Type.String({ format: 'uuid' });
export const ApproverAction = Type.Object(
  {
    approved: Type.Boolean(),
    approvalFlowExecutionId: ExecutionId,
    approverId: Id,
    approvalFlowStepId: Id,
  },
  { additionalProperties: false },
);
export type ApproverAction = Static<typeof ApproverAction>;
export const ActionResult = Type.Object({
  approvalFlowExecutionId: Type.String(),
  status: Status,
  currentStepId: Type.Optional(Type.String()),
});

export const ExecutionDataQuery = Type.Object({
  approvalFlowExecutionId: ExecutionId,
  approverId: Id,
  approvalFlowStepId: Id,
});
export const ExecutionData = Type.Object({
  approvalFlowName: Type.String(),
  approvalFlowDescription: Type.String(),
  requester: Type.String(),
  approvalFlowRequestDate: Type.String({ format: 'date-time' }),
  executionData: Type.Record(Type.String(), Type.Unknown()),
});

export const Execution = Type.Object({
  id: Type.String(),
  approvalFlowId: Type.Union([Type.String(), Type.Null()]),
  tenantId: Type.Union([Type.String(), Type.Null()]),
  requesterId: Type.String(),
  status: Status,
  currentStepId: Type.Union([Type.String(), Type.Null()]),
  webhookUrl: Type.Union([Type.String(), Type.Null()]),
  createdAt: Type.String({ format: 'date-time' }),
  completedAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
  steps: Type.Array(
    Type.Object({
      id: Type.String(),
      order: Type.Integer(),
      requiredApprovals: Type.Integer(),
      actions: Type.Array(
        Type.Object({
          approverId: Type.String(),
          approved: Type.Boolean(),
          createdAt: Type.String({ format: 'date-time' }),
        }),
      ),
    }),
  ),
});
export type Execution = Static<typeof Execution>;
