import type { FastifyInstance, FastifyRequest, RouteOptions } from 'fastify';
import type { CaptchaAttempt, CaptchaService } from './service.ts';

type Body = Record<string, unknown>;
const str = (v: unknown): string | undefined => (typeof v === 'string' && v.length > 0 ? v : undefined);
const email = (b: Body) => ({ email: str(b.email) });
/** Password reset requests name the user by `email`, or by `identifier` when `identifierType` is email (the default). */
const resetEmail = (b: Body) => ({
  email:
    str(b.email) ?? (b.identifierType === undefined || b.identifierType === 'email' ? str(b.identifier) : undefined),
});
/** Activation names the user by id: the check looks the email up only when the policy has exemptions. */
const activationUser = (b: Body) => ({ userId: str(b.userId) });

/**
 * The public routes a captcha policy protects (POST only; `/frontegg/…` aliases share the route): what identifies
 * the user in each body, for `ignoredEmails`. A path missing at start-up is an error, so a renamed route cannot
 * silently lose its protection.
 */
export const CAPTCHA_ROUTES: Record<string, (body: Body) => Pick<CaptchaAttempt, 'email' | 'userId'>> = {
  '/identity/resources/auth/v1/user': email,
  '/identity/resources/users/v1/signUp': email,
  '/identity/resources/users/v1/signUp/username': email,
  '/identity/resources/auth/v1/passwordless/:type/prelogin': email,
  '/identity/resources/auth/v1/webauthn/prelogin': email,
  '/identity/resources/users/v1/passwords/reset': resetEmail,
  '/identity/resources/users/v2/passwords/reset/email': resetEmail,
  '/identity/resources/users/v2/passwords/reset/sms': resetEmail,
  '/identity/resources/users/v1/activate': activationUser,
  '/identity/resources/users/v1/activate/code': activationUser,
};

/**
 * Installs the captcha check on the protected routes, whatever plugin registers them: must run on the root instance
 * before the modules' routes. The token and identifier are read at preValidation, as sent (the reset routes' schemas do
 * not declare recaptchaToken, and a schema with additionalProperties: false would drop it); the check runs at
 * preHandler, after the guard and the schema accepted the request, so malformed input is a validation error and costs
 * no provider call.
 */
export function installCaptcha(app: FastifyInstance, captcha: CaptchaService): void {
  const seen = new Set<string>();
  const offers = new WeakMap<FastifyRequest, CaptchaAttempt>();
  app.addHook('onRoute', (route: RouteOptions) => {
    const methods = Array.isArray(route.method) ? route.method : [route.method];
    const pick = CAPTCHA_ROUTES[route.url];
    if (!pick || !methods.includes('POST')) return;
    seen.add(route.url);
    const capture = async (req: FastifyRequest) => {
      const body = (req.body && typeof req.body === 'object' ? req.body : {}) as Body;
      offers.set(req, {
        token: typeof body.recaptchaToken === 'string' ? body.recaptchaToken : undefined,
        ip: req.ip,
        ...pick(body),
      });
    };
    const check = async (req: FastifyRequest) => {
      const offer = offers.get(req);
      await captcha.check(offer ?? { token: undefined, ip: req.ip });
    };
    route.preValidation = [...asArray(route.preValidation), capture] as RouteOptions['preValidation'];
    route.preHandler = [...asArray(route.preHandler), check] as RouteOptions['preHandler'];
  });
  app.addHook('onReady', async () => {
    const missing = Object.keys(CAPTCHA_ROUTES).filter((u) => !seen.has(u));
    if (missing.length) throw new Error(`captcha: protected routes not registered (renamed?): ${missing.join(', ')}`);
  });
}

function asArray<T>(v: T | T[] | undefined): T[] {
  return v === undefined ? [] : Array.isArray(v) ? v : [v];
}
