import type { VerifyView } from './signin-store.ts';

/**
 * The TOTP sign-ins this instance challenged and that wait for their code: what the verify would otherwise read back
 * (the mfaToken's row, the user, the memberships, the authenticator devices with their sealed secrets), as the
 * password sign-in read the user (with the row's version, `xmin`) and the memberships, and as the challenge statement
 * read the authenticators. The verify of a code that matches here starts the session in one statement whose guard
 * re-checks in the database everything this copy could have missed: the token still unspent, unexpired and under
 * its attempts, the user row unchanged, the account's membership still usable with the same roles, the device's
 * step still fresh (store.snapshotSpendGuard). Anything else (no entry on this instance, a wrong code, a guard that
 * fails) takes the verify's full path, which reads everything again.
 * Decision "MFA verify from the challenge's snapshot" (docs/decisions.md).
 *
 * Bounded: past `max` entries the oldest is dropped (its verify takes the full path). Each entry is taken once.
 */
export interface PendingSignIn {
  view: VerifyView;
  /** The user row's `xmin` when the challenge read it. */
  version: string;
}

export function createPendingSignIns(max = 10_000) {
  const entries = new Map<string, PendingSignIn>();
  return {
    remember(tokenHash: string, p: PendingSignIn): void {
      if (entries.size >= max) entries.delete(entries.keys().next().value as string);
      entries.set(tokenHash, p);
    },
    /** The entry of an mfaToken (removed), unless gone or expired. */
    take(tokenHash: string): PendingSignIn | undefined {
      const p = entries.get(tokenHash);
      if (!p) return undefined;
      entries.delete(tokenHash);
      return p.view.t.expires_at.getTime() > Date.now() ? p : undefined;
    },
  };
}
export type PendingSignIns = ReturnType<typeof createPendingSignIns>;
