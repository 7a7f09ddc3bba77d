export { createGroupsService, groupsOfUsers, type GroupsService } from './service.ts';
export { groupsRoutes } from './routes.ts';
export { Group, UserGroupSummary } from './schema.ts';
