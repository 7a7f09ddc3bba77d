export {
  createApprovalFlowsService,
  deadlineOutcome,
  type ApprovalFlowsService,
  type ApprovalFlowsDeps,
} from './service.ts';
export { approvalFlowsRoutes, APPROVAL_FLOWS_PATH } from './routes.ts';
