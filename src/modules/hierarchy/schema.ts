import { Type, type Static } from 'typebox';
import { AccessType, AccountFields, CreateAccount, TenantId } from '../tenants/index.ts';

/** POST /hierarchy/v1: make `childTenantId` a sub-account of `parentTenantId` (moving it if it has a parent). */
export const AssignBody = Type.Object({ parentTenantId: TenantId, childTenantId: TenantId });
export type AssignBody = Static<typeof AssignBody>;

/** DELETE /hierarchy/v1: `childTenantId`, or `tenantId` as existing clients send it; one is required. */
export const UnassignBody = Type.Object({ childTenantId: Type.Optional(TenantId), tenantId: Type.Optional(TenantId) });
export type UnassignBody = Static<typeof UnassignBody>;

/** One account of a sub-account or parent list; level 1 is the nearest (direct child or direct parent). */
export const HierarchyEntry = Type.Object({
  tenantId: Type.String(),
  tenantName: Type.String(),
  level: Type.Integer({ minimum: 1 }),
});
export type HierarchyEntry = Static<typeof HierarchyEntry>;

export interface TreeNode {
  tenantId: string;
  tenantName: string;
  children: TreeNode[];
}

/** The tree node as a shared schema (it refers to itself): registered with `addSchema`, used through `TreeNodeRef`. */
export const TreeNodeSchema = {
  $id: 'HierarchyTreeNode',
  type: 'object',
  required: ['tenantId', 'tenantName', 'children'],
  properties: {
    tenantId: { type: 'string' },
    tenantName: { type: 'string' },
    children: { type: 'array', items: { $ref: 'HierarchyTreeNode#' } },
  },
};
export const TreeNodeRef = Type.Unsafe<TreeNode>(Type.Ref('HierarchyTreeNode#'));

/** POST /sub-tenants/v1: the account fields of CreateAccount with tenantId, name and parentTenantId required (routes.md). */
export const CreateSubAccount = Type.Object({
  ...CreateAccount.properties,
  tenantId: TenantId,
  name: AccountFields.name,
  parentTenantId: TenantId,
});
export type CreateSubAccount = Static<typeof CreateSubAccount>;

/** A path's account id: ids are created to the TenantId pattern, so anything else is a 400, never a lookup. */
export const AccountParams = Type.Object({ tenantId: TenantId });

export const ManagementBody = Type.Object({ isReseller: Type.Boolean() });
export const HierarchySettingsBody = Type.Object({ subAccountAccessType: AccessType });

/** PATCH /sub-tenants/v1/{tenantId}: the update body of the accounts module (an empty one is a 400 from the service). */
export const UpdateSubAccount = Type.Partial(Type.Omit(CreateAccount, ['tenantId', 'parentTenantId']));
export type UpdateSubAccount = Static<typeof UpdateSubAccount>;

/** GET /identity/resources/users/v2/me/hierarchy: an account the signed-in user reaches, with those below it. */
export interface UserTreeNode {
  tenantId: string;
  tenantName: string;
  /** The account's parent (its id only), whether or not the user reaches it; null for a top-level account. */
  parentTenantId: string | null;
  /** True for an account the user belongs to; false for a sub-account reached through a membership above it. */
  member: boolean;
  children: UserTreeNode[];
}

/** The node as a shared schema (it refers to itself), used through `UserHierarchyResponse`. */
export const UserTreeNodeSchema = {
  $id: 'UserHierarchyNode',
  type: 'object',
  required: ['tenantId', 'tenantName', 'parentTenantId', 'member', 'children'],
  properties: {
    tenantId: { type: 'string' },
    tenantName: { type: 'string' },
    parentTenantId: { anyOf: [{ type: 'string' }, { type: 'null' }] },
    member: { type: 'boolean' },
    children: { type: 'array', items: { $ref: 'UserHierarchyNode#' } },
  },
};
export const UserHierarchyResponse = Type.Object({
  tenants: Type.Array(Type.Unsafe<UserTreeNode>(Type.Ref('UserHierarchyNode#')), {
    description:
      'the top accounts of the forest (an account whose parent the user does not reach), by name then id; children likewise',
  }),
});
export type UserHierarchyResponse = Static<typeof UserHierarchyResponse>;
