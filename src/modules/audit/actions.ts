// Audit action names: what an account administrator reads in the log. A write that emits a catalogue event
// (docs/events.md) is recorded under that event's key; every other write under a stable dotted name derived from its
// route (deriveAction). Names never change once given: filters and exports rely on them.

/** The sign-in routes, named before the catalogue existed (kept: stored entries and filters use them). */
export const NAMED_ACTIONS: Record<string, string> = {
  'POST /identity/resources/auth/v1/user': 'user.sign_in',
  'POST /identity/resources/auth/v1/user/token/refresh': 'user.token_refresh',
  'POST /identity/resources/auth/v1/logout': 'user.sign_out',
  'POST /auth/vendor': 'vendor.sign_in',
  // The API-token exchange is a sign-in too (the derived name would read as a token created).
  'POST /identity/resources/auth/v2/api-token': 'api_token.sign_in',
  'POST /identity/resources/auth/v2/api-token/token/refresh': 'api_token.token_refresh',
};

const U = '/identity/resources/users';
const T = '/tenants/resources';
const SCIM = '/directory/resources/scim/v2.0/:configId';
const ENT = '/entitlements/resources/entitlements/v2';

/** Routes whose write emits a catalogue event: the event key is the action (success or failure alike). */
const CATALOGUE: Record<string, string[]> = {
  'user.created': [
    `POST ${U}/v1`,
    `POST ${U}/v2`,
    `POST ${U}/v1/signUp`,
    `POST ${U}/v1/signUp/username`,
    'POST /identity/resources/migrations/v1/local',
  ],
  'user.updated': [
    `PUT ${U}/v1`,
    `PUT ${U}/v2/me`,
    `PUT ${U}/v1/:userId`,
    `POST ${U}/v1/:userId/verify`,
    `PUT ${U}/v1/:userId/invisible`,
    `PUT ${U}/v1/:userId/superuser`,
    `PUT ${U}/v1/:userId/email`,
    `POST ${U}/v1/email/verify`,
  ],
  'user.deleted': [`DELETE ${U}/v1/:userId`, 'DELETE /team/resources/members/v1/:userId'],
  'user.locked': [`POST ${U}/v1/:userId/lock`],
  'user.unlocked': [`POST ${U}/v1/:userId/unlock`],
  'user.invited': [
    'POST /identity/resources/tenants/invites/v1/user',
    'POST /identity/resources/tenants/invites/v2/user',
    `POST ${U}/bulk/v1/invite`,
  ],
  'user.activated': [
    `POST ${U}/v1/activate`,
    `POST ${U}/v1/activate/code`,
    `POST ${U}/v1/invitation/accept`,
    `POST ${U}/v1/invitation/accept/code`,
  ],
  'user.password_changed': [`POST ${U}/v1/passwords/change`],
  'user.password_reset': [`POST ${U}/v1/passwords/reset/verify`, `POST ${U}/v2/passwords/reset/sms/verify`],
  'user.mfa_enrolled': [
    `POST ${U}/v1/mfa/enroll/verify`,
    `POST ${U}/v1/mfa/authenticator/enroll/verify`,
    `POST ${U}/v1/mfa/sms/enroll/verify`,
    'POST /identity/resources/auth/v1/user/mfa/authenticator/enroll/verify',
    'POST /identity/resources/auth/v1/user/mfa/sms/enroll/verify',
    `POST ${U}/v1/mfa/webauthn/enroll/verify`,
    `POST ${U}/webauthn/v1/devices/verify`,
    'POST /identity/resources/auth/v1/user/mfa/webauthn/enroll/verify',
  ],
  'user.mfa_removed': [
    `POST ${U}/v1/mfa/disable`,
    `POST ${U}/v1/mfa/authenticator/:deviceId/disable/verify`,
    `POST ${U}/v1/mfa/sms/:deviceId/disable/verify`,
    `POST ${U}/v1/mfa/webauthn/:deviceId/disable/verify`,
    `DELETE ${U}/webauthn/v1/devices/:deviceId`,
  ],
  'user.impersonated': ['POST /identity/resources/impersonation/v1'],
  'session.revoked': [
    `DELETE ${U}/sessions/v1/me/all`,
    `DELETE ${U}/sessions/v1/me/:id`,
    `POST ${U}/sessions/v1/revoke`,
  ],
  'account.created': [`POST ${T}/tenants/v1`, `POST ${T}/sub-tenants/v1`],
  'account.updated': [
    `PUT ${T}/tenants/v1/:tenantId`,
    `PUT ${T}/tenants/v2/:tenantId`,
    `POST ${T}/tenants/v1/:tenantId/metadata`,
    `DELETE ${T}/tenants/v1/:tenantId/metadata/:key`,
    `PATCH ${T}/sub-tenants/v1/:tenantId`,
  ],
  'account.deleted': [
    `DELETE ${T}/tenants/v1/:tenantId`,
    `DELETE ${T}/tenants/v1`,
    `DELETE ${T}/sub-tenants/v1/:tenantId`,
  ],
  'account.moved': [`POST ${T}/hierarchy/v1`, `DELETE ${T}/hierarchy/v1`],
  'scim.user_provisioned': [`POST ${SCIM}/Users`, `PUT ${SCIM}/Users/:id`, `PATCH ${SCIM}/Users/:id`],
  'scim.user_deprovisioned': [`DELETE ${SCIM}/Users/:id`],
  'scim.group_provisioned': [`POST ${SCIM}/Groups`, `PUT ${SCIM}/Groups/:id`, `PATCH ${SCIM}/Groups/:id`],
  'entitlement.granted': [`POST ${ENT}`, `POST ${ENT}/batch`],
  'entitlement.revoked': [`DELETE ${ENT}/:id`, `DELETE ${ENT}/batch`],
};

const BY_ROUTE = new Map(
  Object.entries(CATALOGUE).flatMap(([action, routes]) => routes.map((r) => [r, action] as const)),
);

/** First words of a route's last segment that make it an action, not a resource ("…/:userId/lock" is `user.lock`). */
const VERBS = new Set([
  'accept',
  'activate',
  'approver',
  'assign',
  'bulk',
  'change',
  'check',
  'count',
  'decline',
  'delete',
  'disable',
  'enable',
  'enroll',
  'execute',
  'export',
  'force',
  'generate',
  'import',
  'invite',
  'link',
  'logout',
  'migrate',
  'postlogin',
  'prelogin',
  'preverify',
  'recover',
  'refresh',
  'regenerate',
  'replace',
  'replay',
  'resend',
  'reset',
  'revoke',
  'rotate',
  'search',
  'test',
  'unassign',
  'unlink',
  'unlock',
  'validate',
  'verify',
]);
const METHOD_VERB: Record<string, string> = { POST: 'created', PUT: 'updated', PATCH: 'updated', DELETE: 'deleted' };

/** A route segment as a name part: snake_case, singular, accounts named as such (a tenant is an account). */
function word(segment: string): string {
  let w = segment
    .replace(/^\./, '')
    .replace(/([a-z0-9])([A-Z])/g, '$1_$2')
    .replace(/-/g, '_')
    .toLowerCase();
  if (w.endsWith('ies') && w.length > 4) w = `${w.slice(0, -3)}y`;
  else if (w.length > 3 && w.endsWith('s') && !/(ss|us|is)$/.test(w)) w = w.slice(0, -1);
  return w.replace(/(^|_)tenant(?=_|$)/g, '$1account');
}

/**
 * The dotted name of a write without a catalogue event: the route's literal segments (without the area prefix before
 * `resources`, `resources` itself and versions), then the verb: the last segment when it names an action, else
 * `created` / `updated` / `deleted` by method. `POST /identity/resources/roles/v1` → `role.created`,
 * `POST /identity/resources/users/v1/:userId/roles` → `user.role.created`,
 * `PUT …/sso/v1/…/validate` → `….validate`.
 */
export function deriveAction(method: string, url: string): string {
  const parts = url.split('/').filter(Boolean);
  if (parts[1] === 'resources') parts.splice(0, 2);
  const words = parts.filter((p) => !p.startsWith(':') && p !== 'resources' && !/^v\d+(\.\d+)?$/.test(p)).map(word);
  const last = words[words.length - 1] ?? 'resource';
  if (VERBS.has(last.split('_')[0])) return words.join('.');
  return [...words, METHOD_VERB[method] ?? method.toLowerCase()].join('.');
}

/** The action of a write: the route's configured name, a sign-in name, the catalogue event's key, else derived. */
export function actionOf(method: string, url: string, configured?: string): string {
  const key = `${method} ${url}`;
  return configured ?? NAMED_ACTIONS[key] ?? BY_ROUTE.get(key) ?? deriveAction(method, url);
}

/** "user.created alice@a.test by bob@a.test", with ": failed (GH-…)" for a refused write. */
export function describe(e: {
  action: string;
  target?: string | null;
  actor: string;
  outcome: string;
  error?: string | null;
}): string {
  const who = e.target && e.target !== e.actor ? `${e.action} ${e.target} by ${e.actor}` : `${e.action} by ${e.actor}`;
  return e.outcome === 'failure' ? `${who}: failed${e.error ? ` (${e.error})` : ''}` : who;
}
