import type { FastifyReply, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import type { EnvironmentService } from '../environment/index.ts';
import { REFRESH_COOKIE } from '../auth/index.ts';
import type { Client } from './kit.ts';

/** The login answer of wire.md section 4 (open: a gate's challenge, e.g. MFA, adds its own fields). */
export const LoginAnswer = Type.Object({
  tokenType: Type.Optional(Type.String()),
  accessToken: Type.Optional(Type.String()),
  refreshToken: Type.Optional(Type.String()),
  expiresIn: Type.Optional(Type.Integer()),
  expires: Type.Optional(Type.String()),
  mfaRequired: Type.Boolean(),
  mfaToken: Type.Optional(Type.String()),
  userId: Type.Optional(Type.String()),
  userEmail: Type.Optional(Type.String()),
  emailVerified: Type.Optional(Type.Boolean()),
}, { additionalProperties: true });

export const clientOf = (req: FastifyRequest): Client => ({ ip: req.ip, userAgent: req.headers['user-agent'] });

/**
 * Answers a sign-in a flow finished: with tokens, the refresh token also goes into the `gh_refresh` cookie as the
 * password sign-in sets it (same attributes).
 */
export async function sendLogin(reply: FastifyReply, r: object, env: EnvironmentService, secureCookies: boolean, status = 200) {
  const token = (r as { refreshToken?: unknown }).refreshToken;
  if (typeof token === 'string') {
    const s = await env.settings();
    const sameSite = s.cookieSameSite === 'NONE' ? 'None' : s.cookieSameSite === 'STRICT' ? 'Strict' : 'Lax';
    const secure = secureCookies || sameSite === 'None' ? '; Secure' : '';
    reply.header('set-cookie', `${REFRESH_COOKIE}=${encodeURIComponent(token)}; Path=/; HttpOnly; SameSite=${sameSite}; Max-Age=${s.defaultRefreshTokenExpiration}${secure}`);
  }
  return reply.status(status).send(r);
}
