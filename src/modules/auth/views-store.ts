import { dateFromJson } from '../../lib/time.ts';
import type { Queryable } from '../../storage/db.ts';
import { prepared } from '../../storage/prepared.ts';
import { sql } from '../../storage/sql.ts';
import {
  membershipsFromJson,
  membershipsWithStateSql,
  signInUserSql,
  userFromJson,
  userJsonSql,
  type MembershipRow,
  type UserRow,
} from '../users/index.ts';
import type { SessionRow } from './store.ts';

/**
 * The reads of the sign-in and refresh hot paths. Each answers one JSON value (one row, one column): the pg client's
 * cost is per column and per row, and these run at every sign-in and refresh (docs/performance.md, "Identity").
 * Re-exported by store.ts.
 */

type Membership = MembershipRow & { live: boolean };
const MEMBERSHIPS_JSON = (userExpr: string) =>
  `(SELECT coalesce(json_agg(m ORDER BY m.created_at, m.tenant_id), '[]') FROM (${membershipsWithStateSql(userExpr)}) m)`;

/**
 * What a refresh needs, in one statement: the session behind a refresh token, with whether that token was already
 * rotated and the idle timeout in force for its account (the account's session policy row, else the environment's);
 * the session's user (null when gone); and the user's memberships as `membershipsWithState` reads them, in its order.
 * Nothing is locked: the refresh runs without a transaction, and the token's single use is a condition of the
 * rotation statement (`rotateWithClaims`), so a concurrent use of the same token found unrotated here still cannot
 * rotate it twice.
 */
const REFRESH_VIEW = prepared(
  `SELECT json_build_object(
            'session', to_json(s),
            'rotated_at', rt.rotated_at,
            'idle_timeout_seconds', (SELECT p.idle_timeout_seconds FROM session_policies p WHERE p.scope IN (s.tenant_id, '') ORDER BY p.scope = '' LIMIT 1),
            'user', ${userJsonSql('s.user_id')},
            'memberships', ${MEMBERSHIPS_JSON('s.user_id')}) AS view
     FROM refresh_tokens rt
     JOIN sessions s ON s.id = rt.session_id
    WHERE rt.token_hash = $1`,
);

export interface RefreshView {
  session: SessionRow & { rotated_at: Date | null };
  idleTimeoutSeconds: number | null;
  user: UserRow | undefined;
  memberships: Membership[];
}

type RawView = {
  session: Record<string, unknown>;
  rotated_at: string | null;
  idle_timeout_seconds: number | null;
  user: Record<string, unknown> | null;
  memberships: Record<string, unknown>[];
};

export async function refreshView(q: Queryable, tokenHash: string): Promise<RefreshView | undefined> {
  const { rows } = await q.query<{ view: RawView }>(REFRESH_VIEW, [tokenHash]);
  return rows.length === 0 ? undefined : fromRawView(rows[0].view);
}

/** As REFRESH_VIEW, by the session's id (the access token's `sid`) instead of a refresh token; `rotated_at` is null. */
const SESSION_VIEW = prepared(
  `SELECT json_build_object(
            'session', to_json(s),
            'rotated_at', NULL::timestamptz,
            'idle_timeout_seconds', (SELECT p.idle_timeout_seconds FROM session_policies p WHERE p.scope IN (s.tenant_id, '') ORDER BY p.scope = '' LIMIT 1),
            'user', ${userJsonSql('s.user_id')},
            'memberships', ${MEMBERSHIPS_JSON('s.user_id')}) AS view
     FROM sessions s
    WHERE s.id = $1`,
);

/** What re-issuing an access token for a session needs, in one statement (see REFRESH_VIEW); `sessionId` a uuid. */
export async function sessionView(q: Queryable, sessionId: string): Promise<RefreshView | undefined> {
  const { rows } = await q.query<{ view: RawView }>(SESSION_VIEW, [sessionId]);
  return rows.length === 0 ? undefined : fromRawView(rows[0].view);
}

function fromRawView(v: RawView): RefreshView {
  const s = v.session;
  const session = {
    ...s,
    created_at: dateFromJson(s.created_at),
    auth_time: dateFromJson(s.auth_time ?? s.created_at),
    last_used_at: dateFromJson(s.last_used_at),
    expires_at: dateFromJson(s.expires_at),
    revoked_at: dateFromJson(s.revoked_at),
    rotated_at: dateFromJson(v.rotated_at),
  } as unknown as SessionRow & { rotated_at: Date | null };
  return {
    session,
    idleTimeoutSeconds: v.idle_timeout_seconds,
    user: v.user ? userFromJson(v.user) : undefined,
    memberships: membershipsFromJson(v.memberships),
  };
}

/**
 * A value a sign-in gate reads about the user (a SQL expression over the user's id, `userExpr`, answering a JSON-able
 * value), read by the sign-in's first statement so the gate needs no statement of its own at most sign-ins.
 */
export interface GatePrefetch {
  name: string;
  sql: (userExpr: string) => string;
}

export interface SignInView {
  user: UserRow;
  /** The user row's version (`xmin`) as read: a later statement can tell whether the row changed since. */
  version: string;
  memberships: Membership[];
  /** Each prefetch's value by its name. */
  gates: Record<string, unknown>;
}

/**
 * What a password sign-in reads before the password is checked, in one statement: the user by email (lower-cased by
 * the caller) or username (users: signInUserSql), the user's memberships as `membershipsWithState` reads them, in its
 * order, and the gates' prefetched values, and the user row's version. Answers undefined for an unknown identifier.
 */
export async function signInView(
  q: Queryable,
  by: 'email' | 'username',
  identifier: string,
  prefetch: readonly GatePrefetch[],
): Promise<SignInView | undefined> {
  const gates = prefetch.map((p) => `'${p.name}', ${p.sql('su.id')}`).join(', ');
  // The text is constant per identifier kind and gate list: marked for preparing.
  const { text, values } = sql`SELECT json_build_object(
                'user', su.json,
                'version', su.version,
                'memberships', ${sql.raw(MEMBERSHIPS_JSON('su.id'))},
                'gates', json_build_object(${sql.raw(gates)})) AS view
         FROM (${signInUserSql(by, identifier)}) su`.build();
  const { rows } = await q.query<{
    view: {
      user: Record<string, unknown>;
      version: string;
      memberships: Record<string, unknown>[];
      gates: Record<string, unknown>;
    };
  }>(prepared(text), values);
  if (rows.length === 0) return undefined;
  const v = rows[0].view;
  return {
    user: userFromJson(v.user),
    version: v.version,
    memberships: membershipsFromJson(v.memberships),
    gates: v.gates,
  };
}
