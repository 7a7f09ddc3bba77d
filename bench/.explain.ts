import { openBenchDb, startBenchApp, RAISED_SIGNIN_LIMITS, type StoreKind } from './lib.ts';
import { sha256Hex } from '../src/lib/crypto.ts';
const kind = (process.argv[2] ?? 'pglite') as StoreKind;
const bdb = await openBenchDb(kind, 'ex');
const app = await startBenchApp(bdb, bdb.db, { env: RAISED_SIGNIN_LIMITS });
const db = app.ctx.db;
const h = { 'gatehouse-tenant-id': 'ab' };
await app.client.request('POST', '/tenants/resources/tenants/v1', { body: { tenantId: 'ab', name: 'ab' } });
await app.client.request('POST', '/identity/resources/users/v1', { body: { email: 'ab@ab.example', password: 'Ab-password-0123!', name: 'ab' }, headers: h });
const s = await app.newClient().request('POST', '/identity/resources/auth/v1/user', { body: { email: 'ab@ab.example', password: 'Ab-password-0123!' } });
const hash = sha256Hex(s.body.refreshToken);
const store = await import('../src/modules/auth/store.ts');
const sqls: Record<string, [string, unknown[]]> = {};
const rec = { query: async (sql: string, p: unknown[]) => { sqls.view = [sql, p]; return { rows: [], rowCount: 0 }; } };
await store.refreshView(rec as any, hash);
const v = sqls.view[0];
sqls.viewNoLateral = [v.replace(/LEFT JOIN LATERAL[\s\S]*?\) m ON true/, 'LEFT JOIN LATERAL (SELECT NULL::text AS tenant_id, NULL::boolean AS is_disabled, NULL::timestamptz AS temporary_expiration_date, NULL::boolean AS sub_account_access_allowed, NULL::timestamptz AS created_at, NULL::text AS sub_account_access_type, NULL::boolean AS live, NULL::text[] AS role_ids) m ON true'), [hash]];
sqls.viewNoPolicy = [v.replace(/\(SELECT p.idle_timeout_seconds[^\n]*LIMIT 1\)/, 'NULL::int'), [hash]];
sqls.viewNoLock = [v.replace('FOR UPDATE OF s, rt', ''), [hash]];
sqls.viewLockS = [v.replace('FOR UPDATE OF s, rt', 'FOR UPDATE OF s'), [hash]];
const { membershipsWithStateSql } = await import('../src/modules/users/store.ts');
sqls.memberships = [membershipsWithStateSql('$1'), [s.body.userId]];
sqls.claimsOnly = ['WITH ' + (await app.ctx.auth.issue.claimsSql(db, 1, { userId: s.body.userId, tenantId: 'ab', roleIds: [] })).cte + ' SELECT ' + (await app.ctx.auth.issue.claimsSql(db, 1, { userId: s.body.userId, tenantId: 'ab', roleIds: [] })).select, (await app.ctx.auth.issue.claimsSql(db, 1, { userId: s.body.userId, tenantId: 'ab', roleIds: [] })).params];
sqls.old1 = ['SELECT s.*, rt.rotated_at FROM refresh_tokens rt JOIN sessions s ON s.id = rt.session_id WHERE rt.token_hash = $1 FOR UPDATE OF s', [hash]];
sqls.users = ['SELECT * FROM users WHERE id = $1', [s.body.userId]];
for (const [k, [sql, p]] of Object.entries(sqls)) {
  const times: number[] = [];
  for (let i = 0; i < 60; i++) {
    await db.transaction(async (tx) => {
      const a = performance.now();
      await tx.query(sql, p);
      times.push(performance.now() - a);
      throw Object.assign(new Error('rollback'), { rb: true });
    }).catch((e) => { if (!e.rb) throw e; });
  }
  times.sort((a, b) => a - b);
  const ex = await db.transaction(async (tx) => { const r = await tx.query<any>(`EXPLAIN (ANALYZE, SUMMARY) ${sql}`, p); throw Object.assign(new Error('x'), { rb: true, r }); }).catch((e) => e.r);
  const lines = ex.rows.map((r: any) => Object.values(r)[0] as string);
  console.log(k, 'median ms', times[30].toFixed(3), lines.filter((l: string) => /Planning Time|Execution Time/.test(l)).join(' | '));
}
await app.close(); await bdb.destroy();
