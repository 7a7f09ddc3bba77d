export { createRolesService, defaultRoleIdsSql, type RolesService, type RolesDeps, type Actor } from './service.ts';
export { rolesRoutes } from './routes.ts';
export { grantorOf, type Grantor, type UserGrantor } from './grants.ts';
export {
  Role,
  Permission,
  Category,
  PERMISSION_KEY_PATTERN,
  UserIdsQuery,
  MAX_USER_IDS,
  type RoleRecord,
  type PermissionRecord,
  type PermissionView,
  type AssignmentType,
} from './schema.ts';
export {
  roleKeysSql,
  rolePermissionKeysSql,
  permissionKeysSql,
  ROLE_PERMISSION_KEYS_SQL,
  permissionKeysByIds,
} from './claims.sql.ts';
