import {
  BENCH_ENCRYPTION_KEY,
  BENCH_VENDOR,
  coldStart,
  freePort,
  runTsxScript,
  stats,
  type BenchDb,
  type BenchOptions,
} from './lib.ts';

// ---------------------------------------------------------------------------------------------------------------
// 4. Cold start

export async function measureColdStart(bdb: BenchDb, label: string, runs: number, opts: BenchOptions) {
  const env: Record<string, string> = {
    DATA_DIR: bdb.dataDir,
    GATEHOUSE_ENCRYPTION_KEY: BENCH_ENCRYPTION_KEY,
    GATEHOUSE_CLIENT_ID: BENCH_VENDOR.clientId,
    GATEHOUSE_API_KEY: BENCH_VENDOR.secret,
  };
  if (bdb.databaseUrl) env.DATABASE_URL = bdb.databaseUrl;
  // The first start creates what is missing (PGlite: initdb when the data dir is new; migrations; the environment)
  // and fills tsx's transform cache and the OS page cache; it is reported but not part of the median.
  const first = await coldStart(env);
  const samples: number[] = [];
  for (let i = 0; i < runs; i++) samples.push((await coldStart(env)).ms);
  const s = stats(samples);
  opts.log(
    `    ${label.padEnd(44)} first ${first.ms.toFixed(0)} ms; runs ${samples.map((x) => x.toFixed(0)).join(', ')} ms; median ${s.p50.toFixed(0)} ms`,
  );
  // Where the time goes: the server's start-up steps, stamped by bench/cold-start-phases.ts (median per step).
  const phaseRuns: { label: string; ms: number }[][] = [];
  for (let i = 0; i < Math.min(3, runs); i++) {
    const port = String(await freePort());
    phaseRuns.push(
      (await runTsxScript('bench/cold-start-phases.ts', { ...env, PORT: port, HOST: '127.0.0.1' })).phases,
    );
  }
  const phases = phaseRuns[0].map((p, i) => ({ label: p.label, ms: stats(phaseRuns.map((r) => r[i].ms)).p50 }));
  return { label, firstMs: first.ms, samples, median: s.p50, min: s.min, max: s.max, phases };
}
