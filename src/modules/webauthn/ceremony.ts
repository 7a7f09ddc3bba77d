import { randomBytes } from 'node:crypto';
import {
  generateAuthenticationOptions,
  generateRegistrationOptions,
  verifyAuthenticationResponse,
  verifyRegistrationResponse,
} from '@simplewebauthn/server';
import { AppError } from '../../http/errors.ts';
import type { CredentialRow, DeviceType } from './store.ts';

/** The relying party: the RP ID (a host name) and the origins whose ceremonies are accepted (config.webauthn). */
export interface Party {
  rpId: string;
  rpName: string;
  origins: string[];
}

/** How long the options of a ceremony may be answered (the challenge's lifetime, and the browser's timeout). */
export const CHALLENGE_TTL_SECONDS = 180;

/** The browser's answer to `navigator.credentials.create()`, as the vendor clients send it. */
export interface RegistrationBody {
  id: string;
  response: { clientDataJSON: string; attestationObject: string; transports?: string[] };
  authenticatorAttachment?: string;
}
/** The browser's answer to `navigator.credentials.get()`. */
export interface AssertionBody {
  id: string;
  response: { clientDataJSON: string; authenticatorData: string; signature: string; userHandle?: string | null };
}

export const newChallenge = () => new Uint8Array(randomBytes(32));

/** The challenge a client data names (base64url); a client data that is not JSON with a challenge is refused. */
export function challengeOf(clientDataJSON: string, field: string): string {
  let data: unknown;
  try {
    data = JSON.parse(Buffer.from(clientDataJSON, 'base64url').toString('utf8'));
  } catch {
    data = undefined;
  }
  const challenge = (data as { challenge?: unknown } | undefined)?.challenge;
  if (typeof challenge !== 'string' || challenge.length === 0 || challenge.length > 512)
    throw new AppError('VALIDATION', `${field}: not base64url of a client data JSON with a challenge`);
  return challenge;
}

/** Creation options for a user (user.id: the user id's bytes, so a discoverable credential's userHandle names it). */
export async function creationOptions(
  party: Party,
  user: { id: string; email: string | null; username?: string | null; name?: string | null },
  exclude: CredentialRow[],
) {
  const label = user.email ?? user.username ?? user.id;
  return generateRegistrationOptions({
    rpName: party.rpName,
    rpID: party.rpId,
    userID: new Uint8Array(Buffer.from(user.id, 'utf8')),
    userName: label,
    userDisplayName: user.name || label,
    challenge: newChallenge(),
    timeout: CHALLENGE_TTL_SECONDS * 1000,
    attestationType: 'none',
    excludeCredentials: exclude.map((c) => ({ id: c.credential_id, transports: c.transports as never })),
    authenticatorSelection: { residentKey: 'preferred', userVerification: 'preferred' },
  });
}

/** Request options; `allow` empty for a discoverable credential (the authenticator picks the account). */
export async function requestOptions(party: Party, allow: { id: string; transports?: string[] }[]) {
  return generateAuthenticationOptions({
    rpID: party.rpId,
    challenge: newChallenge(),
    timeout: CHALLENGE_TTL_SECONDS * 1000,
    userVerification: 'preferred',
    allowCredentials: allow.map((c) => ({ id: c.id, transports: c.transports as never })),
  });
}

const COUNTER = /counter value .* was lower than expected/i;
function refused(err: unknown): AppError {
  if (err instanceof AppError) return err;
  const message = err instanceof Error ? err.message : String(err);
  if (COUNTER.test(message))
    return new AppError('WEBAUTHN_COUNTER_REGRESSION', `The signature counter did not increase (${message})`);
  return new AppError('WEBAUTHN_VERIFICATION_FAILED', `The WebAuthn response was refused: ${message}`);
}

/** Verifies an attestation ('none' or any format the library checks) against the challenge the server gave. */
export async function verifyRegistration(party: Party, body: RegistrationBody, challenge: string) {
  try {
    const r = await verifyRegistrationResponse({
      response: {
        id: body.id,
        rawId: body.id,
        type: 'public-key',
        response: body.response as never,
        clientExtensionResults: {},
        authenticatorAttachment: body.authenticatorAttachment as never,
      },
      expectedChallenge: challenge,
      expectedOrigin: party.origins,
      expectedRPID: party.rpId,
      requireUserVerification: false,
    });
    if (!r.verified) throw new Error('the attestation could not be verified');
    const { credential: c } = r.registrationInfo;
    return {
      credentialId: c.id,
      publicKey: c.publicKey,
      counter: c.counter,
      transports: (body.response.transports ?? c.transports ?? []).filter((t) => typeof t === 'string').slice(0, 8),
      backedUp: r.registrationInfo.credentialBackedUp,
    };
  } catch (err) {
    throw refused(err);
  }
}

/** Verifies an assertion made with a stored credential; answers the new counter and the flags. */
export async function verifyAssertion(party: Party, body: AssertionBody, challenge: string, cred: CredentialRow) {
  try {
    const r = await verifyAuthenticationResponse({
      response: {
        id: body.id,
        rawId: body.id,
        type: 'public-key',
        response: { ...body.response, userHandle: body.response.userHandle ?? undefined },
        clientExtensionResults: {},
      },
      expectedChallenge: challenge,
      expectedOrigin: party.origins,
      expectedRPID: party.rpId,
      credential: {
        id: cred.credential_id,
        publicKey: new Uint8Array(cred.public_key),
        counter: Number(cred.counter),
        transports: cred.transports as never,
      },
      requireUserVerification: false,
    });
    if (!r.verified) throw new Error('the signature could not be verified');
    const i = r.authenticationInfo;
    return { counter: i.newCounter, userVerified: i.userVerified, backedUp: i.credentialBackedUp };
  } catch (err) {
    throw refused(err);
  }
}

/**
 * The amr of a WebAuthn proof (RFC 8176): `swk` for a synced (backed-up) credential, a key in software, `hwk` for a
 * device-bound one; `user` for the presence test every assertion carries.
 */
export const keyMethod = (backedUp: boolean) => (backedUp ? 'swk' : 'hwk');

/** The device type of a new credential: as the client says, else from the browser's attachment (default Platform). */
export const deviceTypeOf = (named: DeviceType | undefined, attachment?: string): DeviceType =>
  named ?? (attachment === 'cross-platform' ? 'CrossPlatform' : 'Platform');
