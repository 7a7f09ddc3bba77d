// Temporary A/B: the database work of one refresh, before (9 statements) vs after (2), interleaved, same process.
import { openBenchDb, startBenchApp, RAISED_SIGNIN_LIMITS, type StoreKind } from './lib.ts';
import { sha256Hex, randomSecret } from '../src/lib/crypto.ts';
import * as store from '../src/modules/auth/store.ts';
const kind = (process.argv[2] ?? 'pglite') as StoreKind;
const bdb = await openBenchDb(kind, 'ab');
const app = await startBenchApp(bdb, bdb.db, { env: RAISED_SIGNIN_LIMITS });
const db = app.ctx.db;
const h = { 'gatehouse-tenant-id': 'ab' };
await app.client.request('POST', '/tenants/resources/tenants/v1', { body: { tenantId: 'ab', name: 'ab' } });
await app.client.request('POST', '/identity/resources/users/v1', { body: { email: 'ab@ab.example', password: 'Ab-password-0123!', name: 'ab' }, headers: h });
const s = await app.newClient().request('POST', '/identity/resources/auth/v1/user', { body: { email: 'ab@ab.example', password: 'Ab-password-0123!' } });
let token: string = s.body.refreshToken;
const old = async () => db.transaction(async (tx) => {
  const hash = sha256Hex(token);
  const sess = (await tx.query<any>('SELECT s.*, rt.rotated_at FROM refresh_tokens rt JOIN sessions s ON s.id = rt.session_id WHERE rt.token_hash = $1 FOR UPDATE OF s', [hash])).rows[0];
  await tx.query('SELECT * FROM session_policies WHERE scope = ANY($1::text[])', [[sess.tenant_id, '']]);
  await tx.query('SELECT * FROM users WHERE id = $1', [sess.user_id]);
  const ms = (await tx.query<any>(`SELECT ut.tenant_id, ut.is_disabled, ut.temporary_expiration_date, ut.sub_account_access_allowed, ut.created_at,
            t.sub_account_access_type, t.deleted_at IS NULL AS live,
            coalesce(array_agg(ur.role_id::text) FILTER (WHERE ur.role_id IS NOT NULL), '{}') AS role_ids
     FROM user_tenants ut JOIN tenants t ON t.tenant_id = ut.tenant_id
     LEFT JOIN user_roles ur ON ur.tenant_id = ut.tenant_id AND ur.user_id = ut.user_id
     WHERE ut.user_id = $1 GROUP BY ut.tenant_id, ut.user_id, t.sub_account_access_type, t.deleted_at ORDER BY ut.created_at, ut.tenant_id`, [sess.user_id])).rows;
  await tx.query(`SELECT c.strategy, r.id, r.ip FROM ip_restriction_config c LEFT JOIN ip_restrictions r ON r.tenant_id = c.tenant_id AND r.strategy = c.strategy AND r.is_active WHERE c.tenant_id = $1 AND c.is_active`, [sess.tenant_id]);
  const next = randomSecret(32);
  await tx.query(`WITH rotated AS (UPDATE refresh_tokens SET rotated_at = now() WHERE token_hash = $2), issued AS (INSERT INTO refresh_tokens (token_hash, session_id) VALUES ($3, $1)) UPDATE sessions SET last_used_at = now(), tenant_id = $4 WHERE id = $1`, [sess.id, hash, sha256Hex(next), sess.tenant_id]);
  await tx.query('SELECT settings FROM environment');
  const g = (await tx.query<any>(`SELECT DISTINCT gr.role_id FROM group_users gu JOIN group_roles gr ON gr.tenant_id = gu.tenant_id AND gr.group_id = gu.group_id WHERE gu.tenant_id = $1 AND gu.user_id = $2 AND NOT EXISTS (SELECT 1 FROM group_config c WHERE NOT c.enabled OR NOT c.roles_enabled)`, [sess.tenant_id, sess.user_id])).rows;
  await tx.query(`SELECT ARRAY(SELECT r.key FROM roles r WHERE r.id = ANY($1::uuid[]) ORDER BY r.level, r.key, r.tenant_id NULLS FIRST, r.id) AS roles,
            ARRAY(SELECT DISTINCT p.key FROM role_permissions rp JOIN permissions p ON p.id = rp.permission_id WHERE rp.role_id = ANY($1::uuid[]) ORDER BY p.key) AS permissions`, [[...ms[0].role_ids, ...g.map((x: any) => x.role_id)]]);
  token = next;
});
const neu = async () => db.transaction(async (tx) => {
  const hash = sha256Hex(token);
  const v = (await store.refreshView(tx, hash))!;
  const next = randomSecret(32);
  const c = await app.ctx.auth.issue.claimsSql(tx, 5, { userId: v.user!.id, tenantId: v.session.tenant_id, roleIds: v.memberships[0].role_ids });
  await store.rotateWithClaims(tx, { sessionId: v.session.id, oldHash: hash, newHash: sha256Hex(next), tenantId: v.session.tenant_id }, c);
  token = next;
});
const t = { old: 0, neu: 0 };
for (let i = 0; i < 30; i++) { await old(); await neu(); }
const N = Number(process.argv[3] ?? 300);
for (let i = 0; i < N; i++) {
  let a = performance.now(); await old(); t.old += performance.now() - a;
  a = performance.now(); await neu(); t.neu += performance.now() - a;
}
console.log(`${kind}: database work of one refresh, mean of ${N} interleaved: before (9 statements + BEGIN/COMMIT) ${(t.old / N).toFixed(3)} ms, after (2 statements + BEGIN/COMMIT) ${(t.neu / N).toFixed(3)} ms`);
await app.close(); await bdb.destroy();
