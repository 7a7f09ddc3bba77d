import { Type, type Static } from 'typebox';

/** Dotted segments; a later segment may be `*` (a wildcard that a role can hold). */
export const PERMISSION_KEY_PATTERN = '^[A-Za-z0-9_-]+(\\.([A-Za-z0-9_-]+|\\*))*$';
/** Role keys travel in the `roles` claim: 1-255 characters, no control characters, no surrounding spaces. */
export const ROLE_KEY_PATTERN =
  '^[^\\s\\u0000-\\u001f\\u007f]([^\\u0000-\\u001f\\u007f]*[^\\s\\u0000-\\u001f\\u007f])?$';
export const ASSIGNMENT_TYPES = ['NEVER', 'ALWAYS', 'ASSIGNABLE'] as const;
export type AssignmentType = (typeof ASSIGNMENT_TYPES)[number];
export const MAX_BATCH = 500;
export const MAX_LEVEL = 2_147_483_647;

const DateTime = Type.String({ format: 'date-time' });
const Id = Type.String({ minLength: 1, maxLength: 64 });
const IdList = (description: string) => Type.Array(Id, { maxItems: 5000, description });
const Name = Type.String({ minLength: 1, maxLength: 255 });
const Description = Type.String({ maxLength: 4096 });
const RoleKey = Type.String({
  minLength: 1,
  maxLength: 255,
  pattern: ROLE_KEY_PATTERN,
  description: '1-255 characters, no control characters or surrounding spaces; unique within its scope',
});
const PermissionKey = Type.String({
  minLength: 1,
  maxLength: 255,
  pattern: PERMISSION_KEY_PATTERN,
  description: 'dotted segments of letters, digits, _ and -; a later segment may be *',
});
const Level = Type.Integer({ minimum: 0, maximum: MAX_LEVEL, description: '0 is the highest rank' });
const Assignment = Type.Union([Type.Literal('NEVER'), Type.Literal('ALWAYS'), Type.Literal('ASSIGNABLE')], {
  description: 'classification: may account roles hold it (ASSIGNABLE), never (NEVER), or always (ALWAYS)',
});

// -- records --

export const Role = Type.Object({
  id: Type.String(),
  vendorId: Type.String({ description: 'the environment id' }),
  tenantId: Type.Union([Type.String(), Type.Null()], {
    description: 'the account of an account role; null for an environment role',
  }),
  key: Type.String(),
  name: Type.String(),
  description: Type.String(),
  isDefault: Type.Boolean(),
  firstUserRole: Type.Boolean(),
  level: Type.Integer(),
  createdAt: DateTime,
  updatedAt: DateTime,
  permissions: Type.Array(Type.String(), { description: 'permission ids' }),
});

export const Permission = Type.Object({
  id: Type.String(),
  key: Type.String(),
  name: Type.String(),
  description: Type.String(),
  createdAt: DateTime,
  updatedAt: DateTime,
  roleIds: Type.Array(Type.String()),
  categoryId: Type.Union([Type.String(), Type.Null()]),
  fePermission: Type.Boolean(),
  assignmentType: Assignment,
});

export const Category = Type.Object({
  id: Type.String(),
  name: Type.String(),
  description: Type.String(),
  createdAt: DateTime,
  updatedAt: DateTime,
  feCategory: Type.Boolean(),
});
export type Category = Static<typeof Category>;

/** The role record of interface.md section 2 (environment roles carry `tenantId: null`). */
export interface RoleRecord {
  id: string;
  vendorId: string;
  tenantId: string | null;
  key: string;
  name: string;
  description: string;
  isDefault: boolean;
  firstUserRole: boolean;
  level: number;
  createdAt: string;
  updatedAt: string;
  permissions: string[];
}

/** The permission record of interface.md section 2. */
export interface PermissionRecord {
  id: string;
  key: string;
  name: string;
  description: string;
  createdAt: string;
  updatedAt: string;
  roleIds: string[];
  categoryId: string | null;
  fePermission: boolean;
}

/** What the permission routes answer: the record plus its classification. */
export interface PermissionView extends PermissionRecord {
  assignmentType: AssignmentType;
}

// -- headers and params --

export const TenantHeaders = Type.Object({
  'gatehouse-tenant-id': Type.Optional(
    Type.String({
      maxLength: 255,
      description: 'the account (alias: frontegg-tenant-id); ignored with a user token, which acts on its own account',
    }),
  ),
});
export const RoleParams = Type.Object({ roleId: Type.String({ minLength: 1, maxLength: 255 }) });
export const PermissionParams = Type.Object({ permissionId: Type.String({ minLength: 1, maxLength: 255 }) });
export const CategoryParams = Type.Object({ categoryId: Type.String({ minLength: 1, maxLength: 255 }) });

// -- roles --

export const CreateRole = Type.Object({
  key: RoleKey,
  name: Name,
  description: Type.Optional(Description),
  isDefault: Type.Optional(Type.Boolean()),
  firstUserRole: Type.Optional(Type.Boolean()),
  migrateRole: Type.Optional(Type.Boolean({ description: 'accepted for compatibility; has no effect' })),
  level: Level,
  permissions: Type.Optional(IdList("permission ids the new role holds (the browser SDK's addRole sends them)")),
});
export type CreateRole = Static<typeof CreateRole>;
export const CreateRoles = Type.Array(CreateRole, { minItems: 1, maxItems: MAX_BATCH });

export const UpdateRole = Type.Object({
  key: Type.Optional(RoleKey),
  name: Type.Optional(Name),
  description: Type.Optional(Description),
  isDefault: Type.Optional(Type.Boolean()),
  firstUserRole: Type.Optional(Type.Boolean()),
  migrateRole: Type.Optional(Type.Boolean({ description: 'accepted for compatibility; has no effect' })),
  level: Type.Optional(Level),
});
export type UpdateRole = Static<typeof UpdateRole>;

export const SetRolePermissions = Type.Object({
  permissionIds: IdList('the complete set of permission ids the role holds'),
});
export const SetRoleTenant = Type.Object({ tenantId: Type.String({ minLength: 1, maxLength: 255 }) });

export const CreateAccountRole = Type.Object({
  key: RoleKey,
  name: Name,
  description: Type.Optional(Description),
  isDefault: Type.Optional(Type.Boolean()),
  baseRoleId: Type.Optional(
    Type.String({
      maxLength: 64,
      description: 'copy the permissions of this role (an environment role or one of the account)',
    }),
  ),
  permissionIds: Type.Optional(IdList('permissions added to those of the base role')),
});
export type CreateAccountRole = Static<typeof CreateAccountRole>;

export const ROLE_SORT_KEYS = [
  'key',
  'name',
  'description',
  'isDefault',
  'firstUserRole',
  'level',
  'updatedAt',
  'createdAt',
] as const;
export type RoleSortKey = (typeof ROLE_SORT_KEYS)[number];
export const RoleListQuery = Type.Object({
  _limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 200, default: 50 })),
  _offset: Type.Optional(
    Type.Integer({ minimum: 0, maximum: 10_000_000, default: 0, description: 'page index, 0-based' }),
  ),
  _filter: Type.Optional(
    Type.String({ maxLength: 255, description: 'substring of the key or name (case-insensitive)' }),
  ),
  _sortBy: Type.Optional(
    Type.Union(
      ROLE_SORT_KEYS.map((k) => Type.Literal(k)),
      { default: 'level' },
    ),
  ),
  _order: Type.Optional(Type.Union([Type.Literal('ASC'), Type.Literal('DESC')], { default: 'ASC' })),
});
export type RoleListQuery = Static<typeof RoleListQuery>;

export const RolePage = Type.Object({
  items: Type.Array(Role),
  _metadata: Type.Object({ totalItems: Type.Integer(), totalPages: Type.Integer() }),
  _links: Type.Object({ next: Type.String(), prev: Type.String(), first: Type.String(), last: Type.String() }),
});

// -- permissions --

export const CreatePermission = Type.Object({
  key: PermissionKey,
  name: Name,
  description: Type.Optional(Description),
  categoryId: Type.Optional(Type.String({ maxLength: 64 })),
  assignmentType: Type.Optional(Assignment),
});
export type CreatePermission = Static<typeof CreatePermission>;
export const CreatePermissions = Type.Array(CreatePermission, { minItems: 1, maxItems: MAX_BATCH });

export const UpdatePermission = Type.Object({
  key: Type.Optional(PermissionKey),
  name: Type.Optional(Name),
  description: Type.Optional(Description),
  categoryId: Type.Optional(
    Type.Union([Type.String({ maxLength: 64 }), Type.Null()], { description: 'null detaches it from its category' }),
  ),
});
export type UpdatePermission = Static<typeof UpdatePermission>;

export const SetPermissionRoles = Type.Object({
  roleIds: IdList('the complete set of roles that hold the permission'),
});
export const Classification = Type.Object({
  permissionIds: Type.Array(Id, { minItems: 1, maxItems: 5000 }),
  type: Assignment,
});

// -- roles of users (GET /identity/resources/users/v3/roles; the groups module reuses the query) --

/** The most user ids one lookup takes. */
export const MAX_USER_IDS = 100;
export const UserIdsQuery = Type.Object({
  ids: Type.Array(Type.String({ maxLength: 4000 }), {
    minItems: 1,
    description: `user ids, comma-separated (ids=a,b) or the parameter repeated (ids=a&ids=b); 1-${MAX_USER_IDS} in all, each a uuid; ids of no user (or of no member of the account) are absent from the answer`,
  }),
});
export type UserIdsQuery = Static<typeof UserIdsQuery>;

/** One user's roles in one account (the browser SDK's GetUserRolesResponse): those assigned there, not via groups. */
export const UserRolesEntry = Type.Object({
  vendorId: Type.String({ description: 'the environment id' }),
  tenantId: Type.String(),
  userId: Type.String(),
  roleIds: Type.Array(Type.String(), { description: 'level, then key order' }),
});
export type UserRolesEntry = Static<typeof UserRolesEntry>;
export const UserRolesResponse = Type.Array(UserRolesEntry, {
  description:
    'one entry per membership: users in the order of ids, then their accounts in the order they joined; only one account with a user token or the tenant header',
});

// -- categories --

export const CreateCategory = Type.Object({
  id: Type.Optional(Type.String({ format: 'uuid', description: 'optional; generated when absent' })),
  name: Name,
  description: Type.Optional(Description),
});
export type CreateCategory = Static<typeof CreateCategory>;
export const UpdateCategory = Type.Object({ name: Type.Optional(Name), description: Type.Optional(Description) });
export type UpdateCategory = Static<typeof UpdateCategory>;
