import type { Db } from '../src/storage/db.ts';
import { stats, type BenchApp, type BenchOptions } from './lib.ts';
import { MIGRATIONS, type Sizes } from './tenants-config.ts';

// ---------------------------------------------------------------------------------------------------------------
// 3. Account migration

export async function measureMigration(app: BenchApp, db: Db, sizes: Sizes, opts: BenchOptions) {
  const prefix = `mig${Date.now().toString(36)}`;
  const batches = Array.from({ length: sizes.migrationBatches }, (_, b) =>
    Array.from({ length: sizes.migrationBatchSize }, (_, i) => `${prefix}-${b}-${i}`),
  );
  const total = sizes.migrationBatches * sizes.migrationBatchSize;
  const start = performance.now();
  const ids: string[] = [];
  const postMs: number[] = [];
  for (const tenants of batches) {
    const r = await app.client.request('POST', MIGRATIONS, { body: { tenants } });
    if (r.status !== 202) throw new Error(`migration POST: HTTP ${r.status} ${JSON.stringify(r.body).slice(0, 300)}`);
    ids.push(r.body.migrationId);
    postMs.push(r.ms);
  }
  const submitted = performance.now() - start;
  const done = new Map<string, any>();
  let polls = 0;
  while (done.size < ids.length) {
    for (const id of ids) {
      if (done.has(id)) continue;
      const r = await app.client.request('GET', `${MIGRATIONS}/status/${id}`);
      polls++;
      if (r.status !== 200) throw new Error(`migration status: HTTP ${r.status}`);
      if (r.body.state === 'failed') throw new Error(`migration ${id} failed: ${JSON.stringify(r.body).slice(0, 300)}`);
      if (r.body.state === 'completed') done.set(id, r.body);
      else break; // jobs run one after another: poll the earliest unfinished one
    }
    if (done.size < ids.length) await new Promise((r) => setTimeout(r, 20));
    if (performance.now() - start > 600_000) throw new Error('account migration did not finish within 10 minutes');
  }
  const endToEnd = performance.now() - start;
  const statuses = [...done.values()];
  const succeeded = statuses.reduce((a, s) => a + s.succeeded, 0);
  const failed = statuses.reduce((a, s) => a + s.failed, 0);
  const { rows } = await db.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM tenants WHERE tenant_id LIKE $1 AND deleted_at IS NULL`,
    [`${prefix}-%`],
  );
  if (succeeded !== total || failed !== 0 || rows[0].n !== total)
    throw new Error(`migration imported ${succeeded} (${failed} failed, ${rows[0].n} live) of ${total}`);
  const t = (s: string) => new Date(s).getTime();
  const jobMs = statuses.map((s) => t(s.completedAt) - t(s.startedAt));
  const serverSpan =
    Math.max(...statuses.map((s) => t(s.completedAt))) - Math.min(...statuses.map((s) => t(s.createdAt)));
  const result = {
    accounts: total,
    requests: sizes.migrationBatches,
    perRequest: sizes.migrationBatchSize,
    chunkSize: app.ctx.config.jobs.chunkSize,
    endToEndMs: endToEnd,
    accountsPerSecond: total / (endToEnd / 1000),
    submitMs: submitted,
    postP50Ms: stats(postMs).p50,
    postMaxMs: stats(postMs).max,
    jobMs: stats(jobMs),
    serverSpanMs: serverSpan,
    statusPolls: polls,
  };
  opts.log(
    `    ${total} accounts in ${(endToEnd / 1000).toFixed(2)} s end to end: ${result.accountsPerSecond.toFixed(0)} accounts/s`,
  );
  return result;
}
