import type { FastifyReply, FastifyRequest } from 'fastify';
import type { BrowserSession } from '../auth/index.ts';
import { type Done, type MeView, mePage, type Section } from './me.views.ts';
import { type AccountPagesDeps, browserSession, HOME, isRecent, loginUrl, refusal } from './shared.ts';

/** The signed-in browser's session, or a 303 to the sign-in page (answered; the caller returns `reply`). */
export async function sessionOr303(
  deps: AccountPagesDeps,
  req: FastifyRequest,
  reply: FastifyReply,
): Promise<BrowserSession | undefined> {
  const s = await browserSession(deps, req);
  if (!s) await reply.redirect(loginUrl(HOME), 303);
  return s;
}

/** The actor of the MFA self-service functions: the user of the session, in its account (a user, never an admin). */
export const actorOf = (s: BrowserSession) => ({ userId: s.user.id, tenantId: s.tenantId, admin: false });

/** Renders /account/me for the session, with a done notice or a refused form's error. */
export async function renderMe(
  deps: AccountPagesDeps,
  req: FastifyRequest,
  reply: FastifyReply,
  session: BrowserSession,
  o: { done?: Done; error?: MeView['error']; name?: string } = {},
) {
  const [devices, sessions] = await Promise.all([
    deps.mfa.devices.list(actorOf(session)),
    deps.sessions.list(session.user.id, session.sessionId),
  ]);
  const view: MeView = {
    session,
    devices,
    sessions,
    recent: isRecent(deps, session),
    hasPassword: Boolean(session.user.password_hash),
    passkeys: deps.passkeys ? await deps.passkeys(req, reply, session) : undefined,
    ...o,
  };
  return reply.page({
    title: 'me.title',
    body: mePage(reply, view),
    scripts: view.passkeys ? deps.passkeyScripts : [],
  });
}

/** A refused form of /account/me: the page again with the error in its section (status of the refusal). */
export async function refusedMe(
  deps: AccountPagesDeps,
  req: FastifyRequest,
  reply: FastifyReply,
  session: BrowserSession,
  section: Section,
  err: unknown,
  o: { name?: string } = {},
) {
  const text = refusal(reply, err);
  return renderMe(deps, req, reply, session, { error: { section, text }, ...o });
}
