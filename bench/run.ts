import { mkdirSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import {
  DEFAULT_BENCH_DATABASE_URL,
  destroyAllBenchDbs,
  formatTable,
  machineInfo,
  REPO_ROOT,
  type AreaResult,
  type BenchOptions,
  type StoreKind,
} from './lib.ts';

/**
 * npm run bench -- <area> [--store pglite|postgres|both] [--quick] [--explain]
 *
 * Runs bench/<area>.ts against each store, prints its tables and writes the figures as JSON to bench/results/.
 * PostgreSQL: BENCH_DATABASE_URL (default postgres://postgres@127.0.0.1:5432/postgres); every dataset gets a fresh
 * database (or schema) that is dropped afterwards.
 */

const AREAS: Record<
  string,
  { describe: string; sections: string[]; load: () => Promise<{ run: (o: BenchOptions) => Promise<AreaResult> }> }
> = {
  scim: {
    describe:
      'SCIM: users provisioned per second by SCIM POST at 10 clients; filter=userName eq p50 over 100k users; SQL statements per call',
    sections: ['statements', 'provision', 'filter'],
    load: () => import('./scim.ts'),
  },
  signin: {
    describe:
      'sign-in methods: email-code passwordless flows/s and p50 at 10 users (SMTP delivery included); TOTP MFA vs password sign-in',
    sections: ['passwordless', 'mfa'],
    load: () => import('./signin.ts'),
  },
  tenants: {
    describe: 'accounts: list pages over 100k accounts, hierarchy walks, account migration, server cold start',
    sections: ['list', 'hierarchy', 'migration', 'cold-start'],
    load: () => import('./tenants.ts'),
  },
  identity: {
    describe: 'sign-in vs raw argon2id, token refresh on one CPU (RS256, ES256), get-user over 100k users',
    sections: ['signin', 'refresh', 'get-user'],
    load: () => import('./identity.ts'),
  },
  agent: {
    describe:
      'entitlements agent: decisions/s at 50 connections vs a trivial Fastify route, a 50k-grant snapshot, change propagation',
    sections: ['throughput', 'large', 'propagation'],
    load: () => import('./agent.ts'),
  },
  events: {
    describe:
      'events and audit: users/s created with and without outbox+audit (same run), webhook deliveries/s to a local receiver',
    sections: ['overhead', 'delivery'],
    load: () => import('./events.ts'),
  },
  sso: {
    describe: 'SSO: SAML ACS post-logins/s and OIDC post-logins/s vs password sign-in, sequential on one connection',
    sections: ['saml', 'oidc', 'pwd'],
    load: () => import('./sso.ts'),
  },
  migration: {
    describe:
      'user migration: 100k users in 100 bulk requests vs the raw insert rate, 202 latency, first sign-in per hash type',
    sections: ['bulk', 'accept', 'signin'],
    load: () => import('./migration.ts'),
  },
  frontdoor: {
    describe:
      'OpenID code flow with the hosted sign-in page vs API sign-in; code exchanges/s on one CPU; sign-in page bytes and p50',
    sections: ['flow', 'exchange', 'page'],
    load: () => import('./frontdoor.ts'),
  },
  tokens: {
    describe:
      'machine tokens: client-credentials exchanges/s on one CPU vs API-token and user-session refreshes in the same run',
    sections: ['exchange', 'api-refresh', 'user-refresh'],
    load: () => import('./tokens.ts'),
  },
  'fleet-invalidation': {
    describe:
      'two instances on one database: ms from a settings change on one until two dropped its cache and serves it (p50, max)',
    sections: ['latency'],
    load: () => import('./fleet-invalidation.ts'),
  },
};

const USAGE = `usage: npm run bench -- <area> [--store pglite|postgres|both] [--quick] [--explain]

areas:
${Object.entries(AREAS)
  .map(([k, v]) => `  ${k.padEnd(10)} ${v.describe}\n  ${''.padEnd(10)} sections: ${v.sections.join(', ')}`)
  .join('\n')}

options:
  --store S    pglite (default), postgres or both; postgres uses BENCH_DATABASE_URL
               (default ${DEFAULT_BENCH_DATABASE_URL}) in a fresh database that is dropped afterwards
  --quick      small sizes, a smoke test of the harness (figures are not comparable)
  --only L     measure only the comma-separated sections L (the data they need is still built)
  --explain    also EXPLAIN (ANALYZE, BUFFERS) each measured list case into the JSON results`;

function parseArgs(argv: string[]) {
  const out = {
    area: undefined as string | undefined,
    stores: ['pglite'] as StoreKind[],
    quick: false,
    explain: false,
    help: false,
    only: undefined as string[] | undefined,
  };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--help' || a === '-h') out.help = true;
    else if (a === '--quick') out.quick = true;
    else if (a === '--explain') out.explain = true;
    else if (a === '--only' || a.startsWith('--only=')) {
      const v = a.includes('=') ? a.slice(a.indexOf('=') + 1) : argv[++i];
      if (!v) throw new UsageError('--only needs a comma-separated list of sections');
      out.only = v
        .split(',')
        .map((x) => x.trim())
        .filter(Boolean);
    } else if (a === '--store' || a.startsWith('--store=')) {
      const v = a.includes('=') ? a.slice(a.indexOf('=') + 1) : argv[++i];
      if (v === 'both') out.stores = ['pglite', 'postgres'];
      else if (v === 'pglite' || v === 'postgres') out.stores = [v];
      else throw new UsageError(`--store must be pglite, postgres or both (got ${v ?? 'nothing'})`);
    } else if (a.startsWith('-')) throw new UsageError(`unknown option ${a}`);
    else if (out.area === undefined) out.area = a;
    else throw new UsageError(`unexpected argument ${a}`);
  }
  return out;
}

class UsageError extends Error {}

async function main(): Promise<number> {
  let args;
  try {
    args = parseArgs(process.argv.slice(2));
  } catch (err) {
    if (!(err instanceof UsageError)) throw err;
    console.error(`${err.message}\n\n${USAGE}`);
    return 2;
  }
  if (args.help) {
    console.log(USAGE);
    return 0;
  }
  if (!args.area || !AREAS[args.area]) {
    console.error(
      `${args.area ? `unknown area "${args.area}"` : 'no area given'}; known areas: ${Object.keys(AREAS).join(', ')}\n\n${USAGE}`,
    );
    return 2;
  }
  const unknown = (args.only ?? []).filter((x) => !AREAS[args.area!].sections.includes(x));
  if (unknown.length) {
    console.error(
      `unknown section(s) ${unknown.join(', ')} for ${args.area}; sections: ${AREAS[args.area].sections.join(', ')}`,
    );
    return 2;
  }
  const area = await AREAS[args.area].load();
  const machine = machineInfo();
  console.log(`gatehouse bench ${args.area}: stores ${args.stores.join(', ')}${args.quick ? ' (quick)' : ''}`);
  console.log(
    `machine: ${machine.cpus} × ${machine.model}, ${machine.memoryGiB} GiB, node ${machine.node}, ${machine.platform}`,
  );

  const resultsDir = join(REPO_ROOT, 'bench', 'results');
  mkdirSync(resultsDir, { recursive: true });
  const all: AreaResult[] = [];
  let failed = false;
  for (const store of args.stores) {
    const startedAt = new Date();
    const loadAtStart = loadavg().map((x) => Number(x.toFixed(2)));
    let result: AreaResult;
    try {
      result = await area.run({
        store,
        quick: args.quick,
        explain: args.explain,
        only: args.only,
        log: (l) => console.log(l),
      });
    } catch (err) {
      console.error(
        `\n[${store}] ${args.area} failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`,
      );
      failed = true;
      continue;
    }
    const finishedAt = new Date();
    all.push(result);
    for (const t of result.tables) console.log(formatTable(t));
    const file = join(
      resultsDir,
      `${args.area}-${store}${args.quick ? '-quick' : ''}-${startedAt.toISOString().replace(/[:.]/g, '-')}.json`,
    );
    const record = {
      area: args.area,
      store,
      quick: args.quick,
      only: args.only,
      command: `npm run bench -- ${process.argv.slice(2).join(' ')}`,
      databaseUrl:
        store === 'postgres'
          ? (process.env.BENCH_DATABASE_URL || DEFAULT_BENCH_DATABASE_URL).replace(/:[^:@/]*@/, ':***@')
          : undefined,
      startedAt: startedAt.toISOString(),
      finishedAt: finishedAt.toISOString(),
      durationSeconds: (finishedAt.getTime() - startedAt.getTime()) / 1000,
      machine,
      /** 1/5/15-minute load averages: other work on the machine competes with the benchmark for the CPUs. */
      loadAverage: { atStart: loadAtStart, atEnd: loadavg().map((x) => Number(x.toFixed(2))) },
      targets: result.targets,
      tables: result.tables,
      data: result.data,
    };
    writeFileSync(file, `${JSON.stringify(record, null, 2)}\n`);
    console.log(`\n[${store}] ${args.area} took ${record.durationSeconds.toFixed(0)} s; results: ${file}`);
  }

  if (all.length) {
    console.log(
      formatTable({
        title: 'targets',
        columns: ['store', 'target', 'measured', 'result'],
        rows: all.flatMap((r) => r.targets.map((t) => [r.store, t.name, t.measured, t.met ? 'met' : 'MISSED'])),
      }),
    );
  }
  return failed ? 1 : 0;
}

// Ctrl-C or a kill: drop the temporary databases and directories before leaving.
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    console.error(`\n${signal}: removing the benchmark's databases`);
    void destroyAllBenchDbs().finally(() => process.exit(130));
  });
}

main().then(
  (code) => process.exit(code),
  (err) => {
    console.error(err);
    process.exit(1);
  },
);
