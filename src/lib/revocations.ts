/**
 * This process's revocation epoch: bumped whenever this process ends access (a session revoked, a member removed or
 * disabled, a user locked or deleted, an account removed). Caches of "this token is still live" remember the epoch
 * they were filled in and are void once it moved, so a local revocation applies at once. Process-wide on purpose:
 * a revocation in one app of the process voids the others' entries too, which only costs them a re-read.
 */
let epoch = 0;

export const revocations = {
  get epoch(): number {
    return epoch;
  },
  bump(): void {
    epoch += 1;
  },
};
