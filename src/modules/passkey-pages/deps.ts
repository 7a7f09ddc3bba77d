import { Compile } from 'typebox/compile';
import { AppError } from '../../http/errors.ts';
import type { AccountPagesDeps } from '../account-pages/index.ts';
import type { SigninPagesDeps } from '../signin-pages/index.ts';
import { Assertion, NewCredential, type WebAuthnService } from '../webauthn/index.ts';

/**
 * What the passkey pages use: the WebAuthn service (its page functions and the flows behind the API's routes), and
 * the sign-in and account pages' deps, whose session, recent-sign-in and sign-in finishing rules they reuse.
 */
export interface PasskeyPagesDeps {
  webauthn: WebAuthnService;
  signin: SigninPagesDeps;
  account: AccountPagesDeps;
}

const assertion = Compile(Assertion);
const credential = Compile(NewCredential);

type AssertionJson = Parameters<WebAuthnService['pages']['verifySignIn']>[0];
type CredentialJson = Parameters<WebAuthnService['pages']['register']>[1];

/** The form's `response` field as the API would take it; anything else is a refused passkey answer (400). */
function parse(raw: string | undefined, check: (v: unknown) => boolean, what: string): Record<string, unknown> {
  let v: unknown;
  try {
    v = JSON.parse(raw ?? '');
  } catch {
    v = undefined;
  }
  if (!check(v))
    throw new AppError('WEBAUTHN_VERIFICATION_FAILED', `body.response must be the WebAuthn JSON of ${what}`);
  return v as Record<string, unknown>;
}

/** An assertion (navigator.credentials.get()) from a form, with only the fields the API reads. */
export function assertionOf(raw: string | undefined): AssertionJson {
  const v = parse(raw, (x) => assertion.Check(x), 'navigator.credentials.get()') as unknown as AssertionJson;
  return { id: v.id, response: v.response };
}

/** A new credential (navigator.credentials.create()) from a form, with only the fields the API reads. */
export function credentialOf(raw: string | undefined, name?: string): CredentialJson {
  const v = parse(raw, (x) => credential.Check(x), 'navigator.credentials.create()') as unknown as CredentialJson;
  const label = name?.trim();
  return {
    id: v.id,
    response: v.response,
    authenticatorAttachment: v.authenticatorAttachment,
    ...(label ? { name: label } : {}),
  };
}
