import { createHash } from 'node:crypto';
import { decrypt, encrypt, randomSecret, sha256Hex } from '../../lib/crypto.ts';
import { AppError } from '../../http/errors.ts';
import type { Queryable } from '../../storage/db.ts';
import * as store from './store.ts';

/**
 * Every browser sign-in flow (SAML, OIDC SSO, social) starts with server-side state: a random `state` (stored as its
 * sha256, never in clear), a `nonce` for OpenID providers, and a PKCE verifier sealed with the KEK. The state expires
 * after FLOW_TTL_SECONDS and is consumed by one statement, so it works once.
 */
export const FLOW_TTL_SECONDS = 600;

export interface NewFlow {
  kind: 'saml' | 'oidc' | 'social';
  tenantId?: string | null;
  configId?: string | null;
  provider?: string | null;
  requestId?: string | null;
  redirectUri?: string | null;
  appRedirect?: string | null;
}

export interface StartedFlow {
  state: string;
  nonce: string;
  codeVerifier: string;
  codeChallenge: string;
}

export const pkceChallenge = (verifier: string) => createHash('sha256').update(verifier).digest('base64url');

/** Makes the secrets of a flow; `save` stores them (after e.g. a SAML request id is known). */
export function flowSecrets(): StartedFlow {
  const codeVerifier = randomSecret(48);
  return { state: randomSecret(24), nonce: randomSecret(24), codeVerifier, codeChallenge: pkceChallenge(codeVerifier) };
}

export async function saveFlow(q: Queryable, kek: Buffer, secrets: StartedFlow, f: NewFlow): Promise<void> {
  await store.insertState(q, {
    state_hash: sha256Hex(secrets.state),
    kind: f.kind,
    tenant_id: f.tenantId ?? null,
    config_id: f.configId ?? null,
    provider: f.provider ?? null,
    request_id: f.requestId ?? null,
    nonce: secrets.nonce,
    verifier_enc: encrypt(kek, secrets.codeVerifier),
    redirect_uri: f.redirectUri ?? null,
    app_redirect: f.appRedirect ?? null,
    expires_at: new Date(Date.now() + FLOW_TTL_SECONDS * 1000),
  });
}

export interface TakenFlow extends store.FlowStateRow {
  codeVerifier: string;
}

/** Consumes the state of a flow: unknown, expired, already used or of another kind is a 400 that names the rule. */
export async function takeFlow(
  q: Queryable,
  kek: Buffer,
  state: string | undefined,
  kind: NewFlow['kind'],
): Promise<TakenFlow> {
  if (!state || state.length > 200)
    throw new AppError(
      'SSO_STATE_INVALID',
      'state (or RelayState) is required and must be the value the sign-in started with',
    );
  const row = await store.consumeState(q, sha256Hex(state), kind);
  if (!row)
    throw new AppError('SSO_STATE_INVALID', 'state is unknown, expired or already used; start the sign-in again');
  return { ...row, codeVerifier: row.verifier_enc ? decrypt(kek, row.verifier_enc) : '' };
}
