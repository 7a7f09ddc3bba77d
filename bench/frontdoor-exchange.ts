import { PASSWORD } from './identity-config.ts';
import type { timingDb } from './identity-statements.ts';
import { Browser, exchange, exchangeBody, frontChannel, signedInCode, type Client } from './frontdoor-flow.ts';
import type { BenchApp, BenchOptions, HttpReply } from './lib.ts';
import type { LoadGenerator, LoadOp, LoadResult } from './loadgen.ts';
import { cpuProfile } from './profile.ts';

/**
 * 2. The authorization_code exchange alone, the server pinned to one CPU (taskset -a -c 0 on this process while a
 * window runs), the clients in the load-generator process on the other CPU. The codes are made beforehand by browsers
 * already signed in (authorize → interaction → redirect with a code; no password hash), one use each.
 */

export interface ExchangeSizes {
  workers: number;
  codesPerRound: number;
  rounds: number;
  warmupMs: number;
  durationMs: number;
  breakdown: number;
  profileMs: number;
}

export const SERVER_CPUS = '0';

async function databasePids(app: BenchApp, store: string): Promise<number[]> {
  if (store !== 'postgres') return [];
  const { rows } = await app.ctx.db.query<{ pid: number }>(
    'SELECT pid FROM pg_stat_activity WHERE datname = current_database()',
  );
  return rows.map((r) => Number(r.pid));
}

export async function measureExchange(
  store: string,
  app: BenchApp,
  publicOrigin: string,
  client: Client,
  emails: string[],
  gen: LoadGenerator,
  timing: ReturnType<typeof timingDb>,
  sizes: ExchangeSizes,
  log: BenchOptions['log'],
  /** The client-credentials exchange (the tokens bench's), run in the same rounds and setup: the machine's yardstick. */
  reference: LoadOp[],
) {
  // Signed-in browsers (one sign-in each through the hosted page), then codes from their sessions.
  const browsers = emails.map(() => new Browser(app.baseUrl, publicOrigin));
  for (const [i, b] of browsers.entries()) {
    const f = await frontChannel(b, client, emails[i], PASSWORD);
    await exchange(b, client, f.code, f.verifier);
  }
  const mint = async (n: number) => {
    const bodies: string[] = [];
    const start = performance.now();
    await Promise.all(
      browsers.map(async (b) => {
        while (bodies.length < n) {
          const c = await signedInCode(b, client);
          bodies.push(exchangeBody(client, c.code, c.verifier));
        }
      }),
    );
    return { bodies, perSecond: bodies.length / ((performance.now() - start) / 1000) };
  };
  const headers = { 'content-type': 'application/x-www-form-urlencoded', authorization: client.basic };
  const opsOf = (bodies: string[]): LoadOp[] =>
    Array.from({ length: sizes.workers }, (_, w) => ({
      method: 'POST',
      path: '/oauth/token',
      headers,
      expect: 200,
      bodies: bodies.filter((_, i) => i % sizes.workers === w),
    }));
  const runs: (LoadResult & { round: number; minted: number; mintPerSecond: number })[] = [];
  const references: (LoadResult & { round: number })[] = [];
  for (let round = 1; round <= sizes.rounds; round++) {
    const m = await mint(sizes.codesPerRound);
    const r = await gen.run({
      baseUrl: app.baseUrl,
      warmupMs: sizes.warmupMs,
      durationMs: sizes.durationMs,
      ops: opsOf(m.bodies),
      serverCpus: SERVER_CPUS,
      watchPids: await databasePids(app, store),
    });
    runs.push({ ...r, round, minted: m.bodies.length, mintPerSecond: m.perSecond });
    const ref = await gen.run({
      baseUrl: app.baseUrl,
      warmupMs: sizes.warmupMs,
      durationMs: sizes.durationMs,
      ops: reference,
      serverCpus: SERVER_CPUS,
      watchPids: await databasePids(app, store),
    });
    references.push({ ...ref, round });
    log(
      `    round ${round}: ${m.bodies.length} codes made (${m.perSecond.toFixed(0)}/s, not measured); exchanges ${r.perSecond.toFixed(0)}/s on CPU ${r.serverCpus} (${(r.serverCpuShare * 100).toFixed(0)} % busy, ${r.cpuMsPerOp.toFixed(3)} ms CPU each, main thread ${r.mainCpuMsPerOp.toFixed(3)}), p50 ${r.latency.p50.toFixed(1)} ms, p99 ${r.latency.p99.toFixed(1)} ms${r.exhausted ? `; ${r.exhausted} workers ran out of codes` : ''}${Number.isFinite(r.watchedCpuMsPerOp) ? `; PostgreSQL ${r.watchedCpuMsPerOp.toFixed(3)} ms CPU each` : ''}`,
    );
    log(
      `    round ${round}: client-credentials exchanges (yardstick) ${ref.perSecond.toFixed(0)}/s (${(ref.serverCpuShare * 100).toFixed(0)} % busy, ${ref.cpuMsPerOp.toFixed(3)} ms CPU each): code exchange / client-credentials ${((r.perSecond / ref.perSecond) * 100).toFixed(0)} %`,
    );
  }
  // Statements of one exchange (sequential, unpinned), then where a pinned window spends the main thread.
  const pre = await mint(sizes.breakdown);
  const breakdown = await timing.breakdown(sizes.breakdown, async (i) => {
    const r = await browsers[0].request('POST', '/oauth/token', { body: pre.bodies[i], headers, jar: false });
    if (r.status !== 200) throw new Error(`token: HTTP ${r.status} ${r.body.slice(0, 300)}`);
    return { status: r.status, body: undefined, ms: r.ms, bytes: r.bytes } satisfies HttpReply;
  });
  const m = await mint(Math.ceil(sizes.codesPerRound / 3));
  const profiled = await cpuProfile(() =>
    gen.run({
      baseUrl: app.baseUrl,
      warmupMs: 200,
      durationMs: sizes.profileMs,
      ops: opsOf(m.bodies),
      serverCpus: SERVER_CPUS,
    }),
  );
  log(
    `    one exchange: ${breakdown.statementsPerCall.toFixed(1)} statements, ${breakdown.transactionsPerCall.toFixed(1)} transactions, ${breakdown.dbMsPerCall.toFixed(2)} ms in them of ${breakdown.httpMsPerCall.toFixed(2)} ms (sequential)`,
  );
  for (const x of browsers) x.close();
  return { runs, references, breakdown, profile: profiled.profile, profileOps: profiled.result.ops };
}
