/** The event catalogue (wire.md section 10). Versioned: a key's payload only grows; a breaking change is a new key. */
export const EVENT_KEYS = [
  'user.created',
  'user.updated',
  'user.deleted',
  'user.signed_in',
  'user.sign_in_failed',
  'user.locked',
  'user.unlocked',
  'user.invited',
  'user.activated',
  'user.mfa_enrolled',
  'user.mfa_removed',
  'user.password_changed',
  'user.password_reset',
  'session.revoked',
  'account.created',
  'account.updated',
  'account.deleted',
  'account.moved',
  'scim.user_provisioned',
  'scim.user_deprovisioned',
  'scim.group_provisioned',
  'migration.completed',
  'entitlement.granted',
  'entitlement.revoked',
  'user.impersonated', // a vendor or admin acts as the user (data: actor, tenantId, impersonationId)
  'approval.requested',
  'approval.completed', // approval flows: a step's approvers are asked; an execution ends
] as const;
export type EventKey = (typeof EVENT_KEYS)[number];

export interface NewEvent {
  eventKey: EventKey;
  /** The account the event belongs to, when it belongs to one. */
  tenantId?: string | null;
  /** The entity the event is about (`user`, `account`, `session`, ...) and its id: deliveries keep order per entity. */
  entity?: { type: string; id: string };
  /** The payload. Never passwords, tokens, codes or hashes. */
  data: Record<string, unknown>;
}
