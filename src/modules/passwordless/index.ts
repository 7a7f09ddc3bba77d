export { createPasswordlessService, type PasswordlessService, type PasswordlessType } from './service.ts';
export { passwordlessRoutes } from './routes.ts';
export {
  createCodeBook,
  checkError,
  voidCodes,
  MAX_CODE_ATTEMPTS,
  type CodeBook,
  type CodePurpose,
  type CheckResult,
} from './codes.ts';
export { countFailure, limitRequests, type Client, type CodeLimits, type Delivery } from './kit.ts';
export { readFlowSettings, writeFlowSettings, type StrategySettings } from './settings.ts';
export { clientOf, LoginAnswer, sendLogin } from './http.ts';
export { createEqualizer, type Equalizer } from './timing.ts';
export { passwordlessPurgeRules } from './purge.ts';
