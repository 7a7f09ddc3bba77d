import type { Limited, Rule } from '../limits/index.ts';

/**
 * The sign-in limits (docs/operations.md, "Limits"), modelled on Auth0's brute-force protection and suspicious-IP
 * throttling and on Keycloak's brute-force detection: failures count per identifier, per address and identifier, and
 * per address; every attempt counts per address only under a high flood ceiling, so one office behind a NAT or a
 * company just imported can all sign in at once.
 */
export interface SignInLimitRules {
  failuresPerIdentifier: Rule;
  failuresPerIpIdentifier: Rule;
  failuresPerIp: Rule;
  attemptsPerIp: Rule;
}

/** Whose attempt failed: the address it came from and the identifier it named. */
export interface FailedAttempt {
  ip?: string;
  identifier: string;
}

export function signInLimitKeys(rules: SignInLimitRules, ip: string | undefined, identifier: string) {
  const id = identifier.trim().toLowerCase();
  const addr = ip ?? 'unknown';
  return {
    flood: { key: `signin:all:ip:${addr}`, rule: rules.attemptsPerIp } satisfies Limited,
    failures: [
      { key: `signin:fail:id:${id}`, rule: rules.failuresPerIdentifier },
      { key: `signin:fail:ipid:${addr}|${id}`, rule: rules.failuresPerIpIdentifier },
      { key: `signin:fail:ip:${addr}`, rule: rules.failuresPerIp },
    ] satisfies Limited[],
  };
}
