export {
  createCaptchaService,
  exempts,
  CAPTCHA_POLICY_CACHE_MS,
  type CaptchaService,
  type EnforcedPolicy,
} from './service.ts';
export { captchaRoutes } from './routes.ts';
export { installCaptcha, CAPTCHA_ROUTES } from './hook.ts';
export { siteverify, SITEVERIFY_TIMEOUT_MS, type SiteverifyResult } from './verify.ts';
// What the login box shows of the policy, read in its statement (lookups.ts).
export { captchaSiteKey } from './lookups.ts';
