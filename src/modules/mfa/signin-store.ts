import type { Queryable } from '../../storage/db.ts';
import { prepared } from '../../storage/prepared.ts';
import { membershipsWithStateSql, type MembershipRow, type UserRow } from '../users/index.ts';
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
export async function signInSettings(q: Queryable, tenantId: string | undefined): Promise<{ config: ConfigRow; policy?: Pick<PolicyRow, 'enforce' | 'allow_remember' | 'device_expiration_seconds'> }> {
  const { rows } = await q.query<{ config: ConfigRow; policy: PolicyRow | null }>(SIGN_IN_SETTINGS, [tenantId ?? '']);
  return { config: rows[0].config, policy: rows[0].policy ?? undefined };
}

/** A device as the sign-in challenge lists it (no secret). */
export type ChallengeDevice = Pick<DeviceRow, 'id' | 'kind' | 'phone_number'>;

/**
 * The gate's one statement: the user's verified devices of the active kinds and, when the sign-in is challenged
 * (`forced`, or any such device), the new mfaToken inserted (the user's expired tokens go with it). Answers the
 * devices and whether the token was inserted.
 */
const CHALLENGE = prepared(
  `WITH devs AS (SELECT id, kind, phone_number, created_at FROM mfa_devices
                  WHERE user_id = $2 AND verified_at IS NOT NULL AND kind = ANY($6::text[])),
        ins AS (INSERT INTO mfa_tokens (token_hash, user_id, tenant_id, amr, expires_at)
                SELECT $1, $2, $3, $4, now() + make_interval(secs => $5) WHERE $7::boolean OR EXISTS (SELECT 1 FROM devs)
                RETURNING 1),
        gc AS (DELETE FROM mfa_tokens WHERE user_id = $2 AND expires_at < now() AND EXISTS (SELECT 1 FROM ins))
   SELECT coalesce((SELECT json_agg(d ORDER BY d.created_at, d.id) FROM devs d), '[]'::json) AS devices,
          EXISTS (SELECT 1 FROM ins) AS challenged`,
);
export async function challenge(q: Queryable, c: { hash: string; userId: string; tenantId: string; amr: string[]; ttlSeconds: number; kinds: DeviceRow['kind'][]; forced: boolean }): Promise<{ devices: ChallengeDevice[]; challenged: boolean }> {
  const { rows } = await q.query<{ devices: ChallengeDevice[]; challenged: boolean }>(CHALLENGE, [c.hash, c.userId, c.tenantId, c.amr, c.ttlSeconds, c.kinds, c.forced]);
  return rows[0];
}

/** The columns of `membershipsWithStateSql`, in order. */
const MEMBERSHIP_COLUMNS = ['tenant_id', 'is_disabled', 'temporary_expiration_date', 'sub_account_access_allowed', 'created_at', 'sub_account_access_type', 'live', 'role_ids'] as const;

/**
 * What the TOTP verify needs, in one statement: the pending sign-in of an mfaToken (locked), its user, the user's
 * verified authenticator devices, and the user's memberships as `membershipsWithStateSql` reads them (handed to the
 * sign-in, so the account is not read again). One row per membership (at least one); token and membership columns
 * carry the prefixes `_mt_` and `_mm_` (no column of users starts with an underscore). The token's alias is not `t`:
 * the membership SQL names the tenants `t`.
 */
const VERIFY_VIEW = prepared(
  `SELECT u.*, tok.token_hash AS _mt_token_hash, tok.tenant_id AS _mt_tenant_id, tok.amr AS _mt_amr, tok.failures AS _mt_failures, tok.expires_at AS _mt_expires_at,
          (SELECT coalesce(json_agg(d ORDER BY d.created_at, d.id), '[]'::json) FROM (SELECT id, user_id, kind, secret_enc, last_step, created_at FROM mfa_devices
             WHERE user_id = tok.user_id AND kind = 'authenticator' AND verified_at IS NOT NULL) d) AS _mt_devices,
          ${MEMBERSHIP_COLUMNS.map((c) => `m.${c} AS _mm_${c}`).join(', ')}
     FROM mfa_tokens tok
     JOIN users u ON u.id = tok.user_id
     LEFT JOIN LATERAL (${membershipsWithStateSql('tok.user_id')}) m ON true
    WHERE tok.token_hash = $1 AND tok.expires_at > now()
    ORDER BY m.created_at, m.tenant_id
      FOR UPDATE OF tok`,
);
export interface VerifyView {
  t: TokenRow;
  user: UserRow;
  devices: Pick<DeviceRow, 'id' | 'user_id' | 'kind' | 'secret_enc' | 'last_step' | 'created_at'>[];
  memberships: (MembershipRow & { live: boolean })[];
}
export async function verifyView(q: Queryable, hash: string): Promise<VerifyView | undefined> {
  const { rows } = await q.query<Record<string, unknown>>(VERIFY_VIEW, [hash]);
  if (rows.length === 0) return undefined;
  const t = {} as Record<string, unknown>;
  const user = {} as Record<string, unknown>;
  for (const [k, v] of Object.entries(rows[0])) {
    if (k.startsWith('_mt_')) t[k.slice(4)] = v;
    else if (!k.startsWith('_mm_')) user[k] = v;
  }
  const devices = (t.devices as (Omit<VerifyView['devices'][number], 'created_at' | 'last_step'> & { created_at: string; last_step: number | null })[]).map((d) => ({ ...d, last_step: d.last_step === null ? null : String(d.last_step), created_at: new Date(d.created_at) }));
  delete t.devices;
  t.user_id = user.id;
  const memberships = rows.filter((r) => r._mm_tenant_id !== null).map((r) => {
    const m = {} as Record<string, unknown>;
    for (const c of MEMBERSHIP_COLUMNS) m[c] = r[`_mm_${c}`];
    return m as unknown as MembershipRow & { live: boolean };
  });
  return { t: t as unknown as TokenRow, user: user as unknown as UserRow, devices, memberships };
}
