export { accountPagesRoutes } from './routes.ts';
export {
  localReturnTo,
  MFA_COOKIE,
  type AccountPagesDeps,
  type PasskeyFactor,
  browserSession,
  isRecent,
  refusal,
  mfaTokenOf,
  clientOf,
} from './shared.ts';
export { actorOf, refusedMe, sessionOr303 } from './me.page.ts';
export { when } from './me.views.ts';
