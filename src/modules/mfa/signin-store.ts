import { dateFromJson } from '../../lib/time.ts';
import type { Queryable } from '../../storage/db.ts';
import { prepared } from '../../storage/prepared.ts';
import { sql } from '../../storage/sql.ts';
import {
  membershipsFromJson,
  membershipsWithStateSql,
  snapshotHoldsSql,
  userFromJson,
  userRowsSql,
  type MembershipRow,
  type UserRow,
} from '../users/index.ts';
import type { ConfigRow, DeviceRow, PolicyRow, TokenRow } from './store.ts';

/**
 * The statements of the MFA sign-in hot path: what the gate reads and writes at every sign-in, and what the TOTP
 * verify reads. Static text marked `prepared` (named prepared statements on PostgreSQL). Re-exported by store.ts.
 */

/** What the sign-in paths need of the configuration: it and the account's policy (undefined: the built-in default). */
const SIGN_IN_SETTINGS = prepared(
  `SELECT row_to_json(c) AS config,
          (SELECT row_to_json(p) FROM (SELECT enforce, allow_remember, device_expiration_seconds FROM mfa_policies
             WHERE coalesce(tenant_id, '') IN ('', $1) ORDER BY tenant_id NULLS LAST LIMIT 1) p) AS policy
     FROM mfa_config c WHERE c.id`,
);
export async function signInSettings(
  q: Queryable,
  tenantId: string | undefined,
): Promise<{
  config: ConfigRow;
  policy?: Pick<PolicyRow, 'enforce' | 'allow_remember' | 'device_expiration_seconds'>;
}> {
  const { rows } = await q.query<{ config: ConfigRow; policy: PolicyRow | null }>(SIGN_IN_SETTINGS, [tenantId ?? '']);
  return { config: rows[0].config, policy: rows[0].policy ?? undefined };
}

/** The kinds of the verified devices of the user `userExpr` (SQL), as a JSON array: the gate's prefetch. */
export const heldKindsSql = (userExpr: string) =>
  `(SELECT coalesce(json_agg(DISTINCT kind), '[]') FROM mfa_devices WHERE user_id = ${userExpr} AND verified_at IS NOT NULL)`;

/** A device as the sign-in challenge lists it (no secret). */
export type ChallengeDevice = Pick<DeviceRow, 'id' | 'kind' | 'phone_number'>;
/** An authenticator device as the TOTP verify judges a code with it. */
export type VerifyDevice = Pick<DeviceRow, 'id' | 'user_id' | 'kind' | 'secret_enc' | 'last_step' | 'created_at'>;
type Json = Record<string, unknown>;
const devicesFromJson = (devices: Json[]) =>
  devices.map((d) => ({
    ...d,
    last_step: d.last_step === null ? null : String(d.last_step),
    created_at: dateFromJson(d.created_at),
  })) as unknown as VerifyDevice[];

/**
 * The gate's one statement: the user's verified devices of the active kinds and, when the sign-in is challenged
 * (`forced`, or any such device), the new mfaToken inserted. Answers the devices (no secrets), the token's expiry
 * (undefined: not challenged) and, when challenged and `snapshot` is asked, the verified authenticator devices as the
 * TOTP verify judges a code with them (sealed secrets, last steps: the snapshot of pending.ts). `audit` (the sign-in
 * request's entry for the challenge answer, numbered from $9) is stored by the same statement only when the token
 * was inserted. Expired tokens are left to the housekeeping purge (src/modules/housekeeping), not deleted here on
 * every sign-in.
 */
const challengeText = (audit?: string) =>
  `WITH devs AS (SELECT id, user_id, kind, phone_number, secret_enc, last_step, created_at FROM mfa_devices
                  WHERE user_id = $2 AND verified_at IS NOT NULL AND kind = ANY($6::text[])),
        ins AS (INSERT INTO mfa_tokens (token_hash, user_id, tenant_id, amr, expires_at)
                SELECT $1, $2, $3, $4, now() + make_interval(secs => $5) WHERE $7::boolean OR EXISTS (SELECT 1 FROM devs)
                RETURNING expires_at)${
                  audit
                    ? `,
        ${audit}`
                    : ''
                }
   SELECT coalesce((SELECT json_agg(json_build_object('id', d.id, 'kind', d.kind, 'phone_number', d.phone_number) ORDER BY d.created_at, d.id) FROM devs d), '[]'::json) AS devices,
          (SELECT expires_at FROM ins) AS expires_at,
          (SELECT json_agg(json_build_object('id', d.id, 'user_id', d.user_id, 'kind', d.kind, 'secret_enc', d.secret_enc, 'last_step', d.last_step, 'created_at', d.created_at) ORDER BY d.created_at, d.id)
             FROM devs d WHERE d.kind = 'authenticator' AND $8::boolean AND EXISTS (SELECT 1 FROM ins)) AS authenticators`;
const CHALLENGE = prepared(challengeText());
/** The audited text (the audit item's text is the same for every entry): built at first use. */
let challengeAudited: string | undefined;
export async function challenge(
  q: Queryable,
  c: {
    hash: string;
    userId: string;
    tenantId: string;
    amr: string[];
    ttlSeconds: number;
    kinds: DeviceRow['kind'][];
    forced: boolean;
    snapshot: boolean;
  },
  audit?: { cte: (first: number, onlyIf?: string) => string; values: unknown[] },
): Promise<{ devices: ChallengeDevice[]; expiresAt?: Date; authenticators: VerifyDevice[] }> {
  const params = [c.hash, c.userId, c.tenantId, c.amr, c.ttlSeconds, c.kinds, c.forced, c.snapshot];
  const sql = audit ? (challengeAudited ??= prepared(challengeText(audit.cte(9, 'ins')))) : CHALLENGE;
  const { rows } = await q.query<{
    devices: ChallengeDevice[];
    expires_at: Date | null;
    authenticators: Json[] | null;
  }>(sql, audit ? [...params, ...audit.values] : params);
  const r = rows[0];
  return {
    devices: r.devices,
    expiresAt: r.expires_at ?? undefined,
    authenticators: devicesFromJson(r.authenticators ?? []),
  };
}

/** The markers the spend's check raises with (see spendGuard). */
export const SPEND_REUSED = 'mfa-spend:step-already-used';
export const SPEND_TOKEN_GONE = 'mfa-spend:token-gone';

/** A remember-device row to insert: the cookie value's hash, for `ttlSeconds`. */
export interface RememberRow {
  userId: string;
  hash: string;
  ttlSeconds: number;
}

/** The remember-device row as a WITH item of the same statement. */
const rememberItem = (r: RememberRow) =>
  sql`mfa_remember AS (INSERT INTO mfa_remembered_devices (token_hash, user_id, expires_at)
                       VALUES (${r.hash}, ${r.userId}, now() + make_interval(secs => ${r.ttlSeconds})))`;

/**
 * The TOTP verify's writes as WITH items of the session-start statement (login `SignInOptions.guard`): the mfaToken
 * deleted, the device's step accepted when the token was there and the step is above the device's last one, and
 * (`remember`) the remember-device row inserted. The check raises when the token was gone (SPEND_TOKEN_GONE: a
 * concurrent verify of the same token finished first; its DELETE waited for that one's) or the step was not fresh
 * (SPEND_REUSED: another sign-in spent it after the verify read the device; the UPDATE waited for that one's), so
 * the statement, session included, writes nothing then.
 */
export function spendGuard(deviceId: string, step: number, tokenHash: string, remember?: RememberRow) {
  const stepValue = sql.param(step);
  const items = sql`mfa_spent AS (DELETE FROM mfa_tokens WHERE token_hash = ${tokenHash} RETURNING 1),
          mfa_step AS (UPDATE mfa_devices SET last_step = ${stepValue}
                        WHERE id = ${deviceId} AND (last_step IS NULL OR last_step < ${stepValue})
                          AND EXISTS (SELECT 1 FROM mfa_spent)
                        RETURNING id)`;
  return {
    items: remember ? sql.join([items, rememberItem(remember)], ',\n          ') : items,
    check: `(CASE WHEN NOT EXISTS (SELECT 1 FROM mfa_spent) THEN '${SPEND_TOKEN_GONE}' WHEN NOT EXISTS (SELECT 1 FROM mfa_step) THEN '${SPEND_REUSED}' ELSE 'true' END)::boolean`,
  };
}

/** The marker of a snapshot that no longer holds (see snapshotSpendGuard). */
export const SPEND_STALE = 'mfa-spend:snapshot-stale';

/**
 * The TOTP verify's writes when the code was judged on the challenge's snapshot (pending.ts), as WITH items of the
 * session-start statement: spendGuard's, plus the checks the skipped read would have made, in the database: the token
 * unexpired and under `maxAttempts` (nothing was counted on it: the code matched), the user row still the version
 * the snapshot holds, and the membership in the token's account still usable (not disabled, not expired, the account
 * not removed) with the same roles. When any fails the check raises, the statement writes nothing, and the verify
 * takes its full path (claimVerify), which reads everything again and judges the code there.
 */
export function snapshotSpendGuard(
  g: {
    deviceId: string;
    step: number;
    tokenHash: string;
    maxAttempts: number;
    userId: string;
    version: string;
    tenantId: string;
    roleIds: string[];
  },
  remember?: RememberRow,
) {
  const step = sql.param(g.step);
  const items = sql`mfa_spent AS (DELETE FROM mfa_tokens
                         WHERE token_hash = ${g.tokenHash} AND expires_at > now() AND failures < ${g.maxAttempts} RETURNING 1),
          mfa_fresh AS (${snapshotHoldsSql(g)}),
          mfa_step AS (UPDATE mfa_devices SET last_step = ${step}
                        WHERE id = ${g.deviceId} AND (last_step IS NULL OR last_step < ${step})
                          AND EXISTS (SELECT 1 FROM mfa_spent) AND EXISTS (SELECT 1 FROM mfa_fresh)
                        RETURNING id)`;
  return {
    items: remember ? sql.join([items, rememberItem(remember)], ',\n          ') : items,
    check: `(CASE WHEN NOT EXISTS (SELECT 1 FROM mfa_spent) THEN '${SPEND_TOKEN_GONE}' WHEN NOT EXISTS (SELECT 1 FROM mfa_fresh) THEN '${SPEND_STALE}'
                  WHEN NOT EXISTS (SELECT 1 FROM mfa_step) THEN '${SPEND_REUSED}' ELSE 'true' END)::boolean`,
  };
}

/**
 * What the TOTP verify needs, in one statement that needs no transaction: the attempt is counted on the pending
 * sign-in's mfaToken first (`failures + 1`, only while under `maxAttempts` and unexpired: at most that many codes are
 * ever checked against one token, however many arrive at once), and the token, its user (`to_json(u)`), the user's
 * verified authenticator devices and the user's memberships as `membershipsWithStateSql` reads them (handed to the
 * sign-in, so the account is not read again) are answered as one JSON value (the pg client's cost is per column).
 * Undefined: no such token, expired, or out of attempts. The caller gives the attempt back (`refundAttempt`) when it
 * fails for a reason other than the code.
 */
const VERIFY_CLAIM = prepared(
  `WITH tok AS (UPDATE mfa_tokens SET failures = failures + 1
                 WHERE token_hash = $1 AND expires_at > now() AND failures < $2
             RETURNING token_hash, user_id, tenant_id, amr, failures, expires_at)
   SELECT json_build_object(
            'token', to_json(tok),
            'user', to_json(u),
            'devices', (SELECT coalesce(json_agg(d ORDER BY d.created_at, d.id), '[]') FROM (SELECT id, user_id, kind, secret_enc, last_step, created_at FROM mfa_devices
                          WHERE user_id = tok.user_id AND kind = 'authenticator' AND verified_at IS NOT NULL) d),
            'memberships', (SELECT coalesce(json_agg(m ORDER BY m.created_at, m.tenant_id), '[]') FROM (${membershipsWithStateSql('tok.user_id')}) m)) AS view
     FROM tok JOIN (${userRowsSql}) u ON u.id = tok.user_id`,
);
export interface VerifyView {
  t: TokenRow;
  user: UserRow;
  devices: VerifyDevice[];
  memberships: (MembershipRow & { live: boolean })[];
}
export async function claimVerify(q: Queryable, hash: string, maxAttempts: number): Promise<VerifyView | undefined> {
  const { rows } = await q.query<{ view: { token: Json; user: Json; devices: Json[]; memberships: Json[] } }>(
    VERIFY_CLAIM,
    [hash, maxAttempts],
  );
  if (rows.length === 0) return undefined;
  const v = rows[0].view;
  const t = { ...v.token, expires_at: dateFromJson(v.token.expires_at) } as unknown as TokenRow;
  return {
    t,
    user: userFromJson(v.user),
    devices: devicesFromJson(v.devices),
    memberships: membershipsFromJson(v.memberships),
  };
}

const REFUND = prepared('UPDATE mfa_tokens SET failures = failures - 1 WHERE token_hash = $1 AND failures > 0');
/** Gives back an attempt `claimVerify` counted, when the verify failed for a reason other than the code. */
export async function refundAttempt(q: Queryable, hash: string): Promise<void> {
  await q.query(REFUND, [hash]);
}

/** After a wrong code (the attempt already counted by `claimVerify`): the token is burnt once it used its attempts. */
export async function burnIfSpent(q: Queryable, hash: string, maxAttempts: number): Promise<void> {
  await q.query('DELETE FROM mfa_tokens WHERE token_hash = $1 AND failures >= $2', [hash, maxAttempts]);
}
