export { createInvitationsService, type InvitationsService } from './service.ts';
export { invitationsRoutes } from './routes.ts';
