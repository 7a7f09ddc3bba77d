import { Type, type Static } from 'typebox';
import { PageEnvelopeOf } from '../../http/paging.ts';
import { Role } from '../roles/index.ts';

const DateTime = Type.String({ format: 'date-time' });
const Id = Type.String({ minLength: 1, maxLength: 64 });
export const MAX_IDS = 1000;

export const GroupUser = Type.Object({
  id: Type.String(),
  email: Type.String(),
  name: Type.String(),
  profilePictureUrl: Type.String(),
  createdAt: DateTime,
  lastLogin: Type.Union([DateTime, Type.Null()]),
  joinedAt: DateTime,
});
export type GroupUser = Static<typeof GroupUser>;

export const Group = Type.Object({
  id: Type.String(),
  name: Type.String(),
  color: Type.String(),
  description: Type.String(),
  metadata: Type.String({ description: 'stringified JSON object' }),
  roles: Type.Array(Role, {
    description: 'filled when _groupsRelations asks for roles (single-group answers: always)',
  }),
  users: Type.Array(GroupUser, {
    description: 'filled when _groupsRelations asks for users (single-group answers: always)',
  }),
  managedBy: Type.String({ description: 'gatehouse, scim2 or external' }),
  createdAt: DateTime,
  updatedAt: DateTime,
});
export type Group = Static<typeof Group>;

/** The short form on the User record (`groups`): the user's groups in the record's account. */
export const UserGroupSummary = Type.Object({
  id: Type.String(),
  name: Type.String(),
  color: Type.String(),
  description: Type.String(),
  metadata: Type.String(),
  managedBy: Type.String(),
  createdAt: DateTime,
  updatedAt: DateTime,
});
export type UserGroupSummary = Static<typeof UserGroupSummary>;

const Name = Type.String({
  minLength: 1,
  maxLength: 255,
  description: '1-255 characters; unique in the account, case-insensitively',
});
const Color = Type.String({ maxLength: 64 });
const Description = Type.String({ maxLength: 4096 });
const Metadata = Type.String({ maxLength: 65536, description: 'stringified JSON object' });

export const CreateGroup = Type.Object({
  name: Name,
  color: Type.Optional(Color),
  description: Type.Optional(Description),
  metadata: Type.Optional(Metadata),
});
export type CreateGroup = Static<typeof CreateGroup>;
export const UpdateGroup = Type.Object({
  name: Type.Optional(Name),
  color: Type.Optional(Color),
  description: Type.Optional(Description),
  metadata: Type.Optional(Metadata),
});
export type UpdateGroup = Static<typeof UpdateGroup>;

export const Relations = Type.Union([Type.Literal('roles'), Type.Literal('users'), Type.Literal('rolesAndUsers')]);
export type Relations = Static<typeof Relations>;
export const RelationsQuery = Type.Object({ _groupsRelations: Type.Optional(Relations) });
export const GroupsPageQuery = Type.Object({
  _groupsRelations: Type.Optional(Relations),
  _limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 200, default: 50 })),
  _offset: Type.Optional(Type.Integer({ minimum: 0, maximum: 10_000_000, default: 0, description: 'page index' })),
  _sortBy: Type.Optional(
    Type.Union([Type.Literal('id'), Type.Literal('name'), Type.Literal('createdAt'), Type.Literal('updatedAt')], {
      default: 'name',
    }),
  ),
  _order: Type.Optional(Type.Union([Type.Literal('ASC'), Type.Literal('DESC')], { default: 'ASC' })),
  _filter: Type.Optional(Type.String({ maxLength: 255, description: 'substring of the name, case-insensitive' })),
});
export type GroupsPageQuery = Static<typeof GroupsPageQuery>;

export const GroupParams = Type.Object({ id: Id });
export const GroupIdParams = Type.Object({ groupId: Id });
export const BulkGetBody = Type.Object({ groupsIds: Type.Array(Id, { minItems: 1, maxItems: 200 }) });
export const RoleIdsBody = Type.Object({ roleIds: Type.Array(Id, { minItems: 1, maxItems: 100, uniqueItems: true }) });
export const UserIdsBody = Type.Object({
  userIds: Type.Array(Id, { minItems: 1, maxItems: MAX_IDS, uniqueItems: true }),
});

export const GroupsResponse = Type.Object({ groups: Type.Array(Group) });
export const GroupsConfig = Type.Object({ enabled: Type.Boolean(), rolesEnabled: Type.Boolean() });
export const GroupsConfigBody = Type.Object({
  enabled: Type.Optional(Type.Boolean()),
  rolesEnabled: Type.Optional(Type.Boolean()),
});

export const GroupsPage = PageEnvelopeOf(Group);
export const Empty = Type.Object({}, { description: 'empty object' });

/** GET /identity/resources/users/v3/groups: one user's groups in one account (the browser SDK's GetUserGroupsResponse). */
export const UserGroupsEntry = Type.Object({
  vendorId: Type.String({ description: 'the environment id' }),
  tenantId: Type.String(),
  userId: Type.String(),
  groupIds: Type.Array(Type.String(), { description: 'by group name (case-insensitive), then id' }),
});
export type UserGroupsEntry = Static<typeof UserGroupsEntry>;
export const UserGroupsResponse = Type.Array(UserGroupsEntry, {
  description:
    'one entry per membership: users in the order of ids, then their accounts in the order they joined; only one account with a user token or the tenant header',
});
