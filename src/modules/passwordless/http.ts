import type { FastifyReply, FastifyRequest } from 'fastify';
import type { EnvironmentService } from '../environment/index.ts';
import { REFRESH_COOKIE, SignInAnswer } from '../auth/index.ts';
import type { Client } from './kit.ts';

/** The login answer of wire.md section 4 with a gate's challenge (MFA): the schema every sign-in route shares. */
export const LoginAnswer = SignInAnswer;

/** The client of a sign-in, with its cookies (the MFA gate reads its remember-device cookie). */
export const clientOf = (req: FastifyRequest): Client => ({
  ip: req.ip,
  userAgent: req.headers['user-agent'],
  cookie: req.headers.cookie,
});

/**
 * Answers a sign-in a flow finished: with tokens, the refresh token also goes into the `gh_refresh` cookie as the
 * password sign-in sets it (same attributes).
 */
export async function sendLogin(
  reply: FastifyReply,
  r: object,
  env: EnvironmentService,
  secureCookies: boolean,
  status = 200,
  token: unknown = (r as { refreshToken?: unknown }).refreshToken,
) {
  if (typeof token === 'string') {
    const s = await env.settings();
    const sameSite = s.cookieSameSite === 'NONE' ? 'None' : s.cookieSameSite === 'STRICT' ? 'Strict' : 'Lax';
    const secure = secureCookies || sameSite === 'None' ? '; Secure' : '';
    reply.header(
      'set-cookie',
      `${REFRESH_COOKIE}=${encodeURIComponent(token)}; Path=/; HttpOnly; SameSite=${sameSite}; Max-Age=${s.defaultRefreshTokenExpiration}${secure}`,
    );
  }
  return reply.status(status).send(r);
}
