export { createInvitationsService, type InvitationsService } from './service.ts';
export type { InviteBody } from './schema.ts';
export { invitationsRoutes } from './routes.ts';
export { createInviteTokensService, type InviteTokensService, type InviteTokenDto } from './tokens.service.ts';
export { inviteTokensRoutes } from './tokens.routes.ts';
