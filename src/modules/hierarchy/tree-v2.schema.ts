/** GET /tenants/resources/hierarchy/v2 (and /v2/metadata): one account of the calling account's tree. */
export interface HierarchyNodeV2 {
  tenantId: string;
  tenantName: string;
  /** The account's parent (its id only; for the top node it may lie outside what the caller sees); null at the top. */
  parentTenantId: string | null;
  /** 0 for the calling account, 1 for its direct sub-accounts, and so on. */
  level: number;
  /** /v2/metadata only: the account's metadata as a stringified JSON object (as in the account record). */
  metadata?: string;
  children: HierarchyNodeV2[];
}

const node = (id: string, withMetadata: boolean) => ({
  $id: id,
  type: 'object',
  required: ['tenantId', 'tenantName', 'parentTenantId', 'level', ...(withMetadata ? ['metadata'] : []), 'children'],
  properties: {
    tenantId: { type: 'string' },
    tenantName: { type: 'string' },
    parentTenantId: { anyOf: [{ type: 'string' }, { type: 'null' }] },
    level: { type: 'integer', minimum: 0 },
    ...(withMetadata ? { metadata: { type: 'string', description: 'stringified JSON object' } } : {}),
    children: { type: 'array', items: { $ref: `${id}#` } },
  },
});

/** The node schemas refer to themselves: registered with `addSchema`, used through `{ $ref: '<id>#' }`. */
export const HierarchyNodeV2Schema = node('HierarchyNodeV2', false);
export const HierarchyNodeV2MetadataSchema = node('HierarchyNodeV2Metadata', true);
