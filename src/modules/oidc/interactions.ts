import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { AppError } from '../../http/errors.ts';
import { csrfField, formGuard } from '../../http/pages/kit.ts';
import { pickLocale } from '../../http/pages/text.ts';
import type { BrowserSession } from '../auth/index.ts';
import { ACR_MFA } from '../mfa/index.ts';
import { consentBody, pickerBody } from './pages.ts';
import type { InteractionDetails } from './provider-types.ts';
import type { OidcService } from './service.ts';

/** The `acr` of a session without a second factor (one with MFA carries the platform's multi-factor acr). */
export const ACR_SINGLE_FACTOR = 'urn:gatehouse:acr:single-factor';
const MAX_PICKER_ACCOUNTS = 50;

const Params = Type.Object({ uid: Type.String({ minLength: 1, maxLength: 64, pattern: '^[A-Za-z0-9_-]+$' }) });
const AccountBody = Type.Object({ _csrf: Type.String(), tenantId: Type.String({ minLength: 1, maxLength: 255 }) });
const ConsentBody = Type.Object({
  _csrf: Type.String(),
  decision: Type.Union([Type.Literal('allow'), Type.Literal('deny')]),
});
type Input = { tenantId?: string; decision?: 'allow' | 'deny' };
type Req = FastifyRequest<{ Params: { uid: string } }>;

/**
 * The provider's interactions, in the hosted pages' scope: sign-in is the hosted login page (a redirect there and
 * back), then the account choice (account_hint, else a picker for a user of several accounts), then consent for a
 * third-party application. Every step reads who is signed in from the Gatehouse browser session.
 */
export async function oidcInteractionRoutes(scope: FastifyInstance, deps: { oidc: OidcService }) {
  const { oidc } = deps;
  const checkForm = formGuard(scope);
  const route = (uid: string) => `/oidc/interaction/${uid}`;

  async function details(req: Req, reply: FastifyReply): Promise<InteractionDetails> {
    const provider = await oidc.provider();
    const d = await provider.interactionDetails(oidc.rawOf(req), reply.raw).catch(() => undefined);
    if (!d || d.uid !== req.params.uid) throw new AppError('OIDC_INTERACTION_NOT_FOUND');
    req.locale = pickLocale(
      typeof d.params.ui_locales === 'string' ? d.params.ui_locales : req.headers['accept-language'],
    );
    return d;
  }

  async function finish(req: Req, reply: FastifyReply, result: Record<string, unknown>) {
    const provider = await oidc.provider();
    const to = await provider.interactionResult(oidc.rawOf(req), reply.raw, result, { mergeWithLastSubmission: true });
    return reply.redirect(to, 303);
  }

  /**
   * Whether the user must sign in (again): no session; prompt=login or another user hinted (id_token_hint) until a
   * sign-in made after this interaction began (a new session than the one first seen here); max_age exceeded.
   */
  async function mustSignIn(d: InteractionDetails, browser: BrowserSession | undefined): Promise<boolean> {
    if (!browser) return true;
    if (d.prompt.name !== 'login') return false;
    const prompts = String(d.params.prompt ?? '').split(' ');
    if (prompts.includes('login') || d.prompt.reasons.includes('id_token_hint')) {
      const seen = await oidc.sessionSeen(d.uid);
      if (seen === undefined) await oidc.markSessionSeen(d.uid, browser.sessionId);
      if (seen === undefined || seen === browser.sessionId) return true;
    }
    const maxAge = d.params.max_age === undefined ? undefined : Number(d.params.max_age);
    const authTime = Math.floor(browser.authTime.getTime() / 1000);
    return maxAge !== undefined && Math.floor(Date.now() / 1000) - authTime > maxAge;
  }

  function signInUrl(d: InteractionDetails, forced: boolean) {
    const q = new URLSearchParams({ returnTo: route(d.uid) });
    for (const k of ['login_hint', 'ui_locales'] as const) if (typeof d.params[k] === 'string') q.set(k, d.params[k]);
    if (forced) q.set('prompt', 'login');
    return `/account/login?${q}`;
  }

  async function step(req: Req, reply: FastifyReply, input: Input = {}) {
    const d = await details(req, reply);
    const browser = await oidc.browserSession(req);
    if (!browser || (await mustSignIn(d, browser))) return reply.redirect(signInUrl(d, Boolean(browser)), 303);
    // acr_values asks for a second factor the session has not passed: the hosted step-up page, then back here.
    if (
      String(d.params.acr_values ?? '')
        .split(' ')
        .includes(ACR_MFA) &&
      (await oidc.sessionAcr(browser)) !== ACR_MFA
    )
      return reply.redirect(`/account/step-up?returnTo=${encodeURIComponent(route(d.uid))}`, 303);
    const client = await oidc.client(String(d.params.client_id));
    if (!client) throw new AppError('OIDC_CLIENT_NOT_FOUND');
    const name = d.prompt.name;

    if (name === 'login' || name === 'select_account') {
      const hint = typeof d.params.account_hint === 'string' ? d.params.account_hint : undefined;
      const several = browser.tenantIds.length > 1;
      const tenantId =
        input.tenantId ?? (hint && browser.tenantIds.includes(hint) ? hint : several ? undefined : browser.tenantId);
      if (tenantId === undefined) {
        const accounts = [];
        for (const id of browser.tenantIds.slice(0, MAX_PICKER_ACCOUNTS)) {
          accounts.push({ id, name: (await oidc.tenantName(id)) ?? id });
        }
        const body = pickerBody(req.locale, {
          app: client.name,
          accounts,
          csrf: csrfField(reply),
          action: `${route(d.uid)}/account`,
        });
        return reply.page({ title: 'picker.title', body });
      }
      if (!browser.tenantIds.includes(tenantId))
        throw new AppError('NO_ACCOUNT_ACCESS', `body.tenantId: the user is not a member of account ${tenantId}`);
      // The choice is the session's account, as the API's account switch makes it: its tokens are for that account.
      if (tenantId !== browser.tenantId) await oidc.switchAccount(browser.user.id, browser.sessionId, tenantId);
      if (d.grantId) await oidc.link(d.grantId, browser.sessionId);
      if (name === 'select_account') return finish(req, reply, { select_account: {} });
      const acr = (await oidc.sessionAcr(browser)) ?? ACR_SINGLE_FACTOR;
      const ts = Math.floor(browser.authTime.getTime() / 1000);
      const login = { accountId: browser.user.id, amr: browser.amr, acr, ts, remember: true };
      return finish(req, reply, { login, select_account: {} });
    }

    if (name === 'consent') {
      // The provider's session was made from this browser session; another user signed in since: sign in again.
      if (d.session?.accountId !== browser.user.id) return reply.redirect(signInUrl(d, true), 303);
      if (!client.isFirstParty && !input.decision) {
        const scopes = String(d.params.scope ?? '').split(' ');
        const body = consentBody(req.locale, {
          app: client.name,
          scopes,
          csrf: csrfField(reply),
          action: `${route(d.uid)}/consent`,
        });
        return reply.page({ title: 'consent.title', body });
      }
      if (input.decision === 'deny')
        return finish(req, reply, { error: 'access_denied', error_description: 'The user did not allow access' });
      const grantId = await oidc.grant(d, browser.user.id);
      await oidc.link(grantId, browser.sessionId);
      if (d.grantId && d.grantId !== grantId) await oidc.link(d.grantId, browser.sessionId);
      return finish(req, reply, { consent: { grantId } });
    }
    throw new AppError('OIDC_INTERACTION_NOT_FOUND', `Unknown interaction step ${name}`);
  }

  const conf = { config: { auth: 'public' as const } };
  scope.get<{ Params: { uid: string } }>(
    '/oidc/interaction/:uid',
    { ...conf, schema: { hide: true, params: Params } },
    async (req, reply) => step(req, reply),
  );
  scope.post<{ Params: { uid: string }; Body: { tenantId: string } }>(
    '/oidc/interaction/:uid/account',
    { ...conf, preHandler: checkForm, schema: { hide: true, params: Params, body: AccountBody } },
    async (req, reply) => step(req, reply, { tenantId: req.body.tenantId }),
  );
  scope.post<{ Params: { uid: string }; Body: { decision: 'allow' | 'deny' } }>(
    '/oidc/interaction/:uid/consent',
    { ...conf, preHandler: checkForm, schema: { hide: true, params: Params, body: ConsentBody } },
    async (req, reply) => step(req, reply, { decision: req.body.decision }),
  );
}
