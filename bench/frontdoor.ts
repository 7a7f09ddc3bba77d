import { loadavg } from 'node:os';
import { createSignInUsers } from './identity-seed.ts';
import { statementsTable, timingDb } from './identity-statements.ts';
import { measureExchange, SERVER_CPUS, type ExchangeSizes } from './frontdoor-exchange.ts';
import { confidentialClient } from './frontdoor-flow.ts';
import { measureFlow, rateOf, type FlowSizes } from './frontdoor-flow-rate.ts';
import { measurePage } from './frontdoor-page.ts';
import {
  freePort,
  ms,
  openBenchDb,
  RAISED_SIGNIN_LIMITS,
  startBenchApp,
  type AreaResult,
  type BenchOptions,
  type Table,
} from './lib.ts';
import { productionLikeLogger, startLoadGenerator, type LoadGenerator } from './loadgen.ts';
import { profileTable } from './profile.ts';
import { prepareTokenOps } from './tokens.ts';

/**
 * The front door: the OpenID provider's code flow with the hosted sign-in page, through the real HTTP stack.
 *  - flow:     full code flows/s of new visitors (authorize → sign-in page → form post → code → token exchange) against
 *              the password sign-in API's rate, same concurrency, interleaved rounds (both bound by argon2id);
 *  - exchange: authorization_code exchanges/s with the server pinned to one CPU, codes made beforehand;
 *  - page:     the sign-in page's bytes (HTML, CSS, scripts) as a browser gets them, and GET /account/login p50.
 */

interface Sizes {
  flow: FlowSizes;
  exchange: ExchangeSizes;
  page: { rounds: number; n: number; budgetMs: number };
}
const FULL: Sizes = {
  flow: { concurrency: [4, 8], rounds: 2, roundMs: 5000, warmupMs: 1000, breakdown: 10, profileMs: 3000 },
  // Codes for a window at up to ~1,100 exchanges/s; fewer left over when the machine is slower (they expire unused).
  exchange: {
    workers: 32,
    codesPerRound: 4000,
    rounds: 2,
    warmupMs: 500,
    durationMs: 3000,
    breakdown: 40,
    profileMs: 1000,
  },
  page: { rounds: 3, n: 2000, budgetMs: 1500 },
};
const QUICK: Sizes = {
  flow: { concurrency: [4], rounds: 1, roundMs: 2000, warmupMs: 300, breakdown: 3, profileMs: 1000 },
  exchange: {
    workers: 8,
    codesPerRound: 800,
    rounds: 1,
    warmupMs: 300,
    durationMs: 1000,
    breakdown: 10,
    profileMs: 500,
  },
  page: { rounds: 1, n: 300, budgetMs: 500 },
};
const FLOW_RATIO_TARGET = 0.8;
const EXCHANGE_TARGET = 800;
const PAGE_BYTES_TARGET = 30 * 1024;
const PAGE_P50_TARGET = 5;
const REDIRECT_URI = 'https://rp.example.test/callback';

const kb = (n: number) => (Number.isFinite(n) ? `${(n / 1024).toFixed(1)} KB` : '–');
const spread = (xs: number[], d = 1) => `${Math.min(...xs).toFixed(d)}–${Math.max(...xs).toFixed(d)}`;

export async function run(opts: BenchOptions): Promise<AreaResult> {
  const sizes = opts.quick ? QUICK : FULL;
  if (process.env.BENCH_FRONTDOOR_CODES) sizes.exchange.codesPerRound = Number(process.env.BENCH_FRONTDOOR_CODES);
  const { store, log } = opts;
  const want = (s: string) => !opts.only || opts.only.includes(s);
  const tables: Table[] = [];
  const targets: AreaResult['targets'] = [];
  const data: Record<string, unknown> = { sizes };
  const section = (title: string) =>
    log(
      `\n[${store}] ${title}  (load average ${loadavg()
        .map((x) => x.toFixed(2))
        .join(' ')})`,
    );
  const bdb = await openBenchDb(store, 'frontdoor');
  const timing = timingDb(bdb.db);
  let gen: LoadGenerator | undefined;
  const port = await freePort();
  const publicOrigin = `http://127.0.0.1:${port}`;
  const app = await startBenchApp(bdb, timing.db, {
    // PUBLIC_URL names the listening port: the issuer and the redirects point back at this server.
    env: { ...RAISED_SIGNIN_LIMITS, PUBLIC_URL: publicOrigin, OIDC_CODE_TTL: '600' },
    log: productionLikeLogger(),
    port,
  }).catch(async (err) => {
    await bdb.destroy();
    throw err;
  });
  try {
    const users = await createSignInUsers(app, Math.max(...sizes.flow.concurrency));
    const client = await confidentialClient(app, REDIRECT_URI);

    if (want('page')) {
      section('3. the sign-in page: bytes as a browser gets them, GET /account/login latency (new visitor)');
      const runs = [];
      for (let i = 0; i < sizes.page.rounds; i++) runs.push(await measurePage(app.baseUrl, publicOrigin, sizes.page));
      const p = runs[0]!;
      const p50s = runs.map((r) => r.latency.p50);
      const p50 = runs.flatMap((r) => r.samples).sort((a, b) => a - b)[
        Math.ceil(runs.flatMap((r) => r.samples).length / 2) - 1
      ]!;
      data.page = runs.map(({ samples: _s, ...r }) => r);
      log(
        `    ${p.resources.map((r) => `${r.path} ${r.wire} B (${r.encoding})`).join(', ')}; p50 per round ${p50s.map((x) => x.toFixed(2)).join(', ')} ms`,
      );
      tables.push({
        title: `[${store}] the sign-in page as a new visitor's browser loads it (Accept-Encoding: gzip, deflate, br)`,
        columns: [
          'resource',
          'type',
          'bytes on the wire',
          'encoding sent',
          'raw',
          'gzip -6 would be',
          'brotli q4 would be',
        ],
        rows: [
          ...p.resources.map((r) => [r.path, r.type, r.wire, r.encoding, r.raw, r.gzip, r.brotli]),
          ['total', '', p.total.wire, '', p.total.raw, p.total.gzip, p.total.brotli],
        ],
        notes: [
          p.compressed
            ? 'The server compressed what it sent.'
            : 'The server sends every body uncompressed although the browser accepts gzip and br: the wire bytes are the raw bytes; the gzip and brotli columns are what compression would send.',
          'Bodies only; response headers (CSP and the other security headers, Set-Cookie) come on top, about 0.6–1 KB per response.',
        ],
      });
      tables.push({
        title: `[${store}] GET /account/login, one keep-alive connection, sequential, no cookies (a first visit)`,
        columns: ['round', 'n', 'p50 ms', 'p90 ms', 'p99 ms'],
        rows: runs.map((r, i) => [
          i + 1,
          r.latency.n,
          ms(r.latency.p50, 3),
          ms(r.latency.p90, 3),
          ms(r.latency.p99, 3),
        ]),
      });
      const visitor = app.newClient();
      const pageBreakdown = await timing.breakdown(50, () =>
        visitor.request('GET', '/account/login', { headers: { accept: 'text/html' } }),
      );
      tables.push(statementsTable(`[${store}] statements of one GET /account/login`, pageBreakdown));
      targets.push({
        name: 'sign-in page bytes (HTML + CSS + scripts) as sent to a browser accepting gzip/br',
        target: `≤ ${kb(PAGE_BYTES_TARGET)}`,
        measured: `${kb(p.total.wire)} ${p.compressed ? 'compressed' : `uncompressed (gzip would send ${kb(p.total.gzip)})`}`,
        met: p.total.wire <= PAGE_BYTES_TARGET,
      });
      targets.push({
        name: 'GET /account/login p50',
        target: `< ${PAGE_P50_TARGET} ms`,
        measured: `${p50.toFixed(2)} ms (rounds ${spread(p50s, 2)})`,
        met: p50 < PAGE_P50_TARGET,
      });
    }

    if (want('flow')) {
      section(`1. full code flow of a new visitor vs API sign-in, concurrency ${sizes.flow.concurrency.join(' and ')}`);
      const f = await measureFlow(app, publicOrigin, client, users.emails, timing, sizes.flow, log);
      data.flow = f;
      const pct = (a: number, b: number) => `${((a / b) * 100).toFixed(1)} %`;
      const rows: Table['rows'] = [];
      for (const c of sizes.flow.concurrency) {
        const rs = f.rounds.filter((r) => r.concurrency === c);
        for (const r of rs)
          rows.push([
            c,
            `round ${r.round}`,
            ms(r.api.perSecond, 1),
            ms(r.flow.perSecond, 1),
            pct(r.flow.perSecond, r.api.perSecond),
            ms(r.api.latency.p50, 1),
            ms(r.flow.latency.p50, 1),
            ms(r.flow.latency.p99, 1),
            ms(r.api.cpuMsPerOp, 1),
            ms(r.flow.cpuMsPerOp, 1),
            ms(r.flow.mainCpuMsPerOp, 1),
          ]);
        const api = rateOf(rs, (r) => r.api);
        const flow = rateOf(rs, (r) => r.flow);
        const ratios = rs.map((r) => (r.flow.perSecond / r.api.perSecond) * 100);
        rows.push([c, 'all rounds', ms(api, 1), ms(flow, 1), pct(flow, api), null, null, null, null, null, null]);
        targets.push({
          name: `code flows/s vs API sign-ins/s, concurrency ${c}`,
          target: `≥ ${FLOW_RATIO_TARGET * 100} %`,
          measured: `${pct(flow, api)} (${flow.toFixed(1)} vs ${api.toFixed(1)} /s; rounds ${spread(ratios)} %)`,
          met: flow / api >= FLOW_RATIO_TARGET,
        });
      }
      tables.push({
        title: `[${store}] full code flow (${f.requestsPerFlow} requests) vs POST /identity/resources/auth/v1/user (${sizes.flow.roundMs / 1000} s windows, interleaved)`,
        columns: [
          'in flight',
          'round',
          'API sign-ins/s',
          'code flows/s',
          'flow / API',
          'API p50 ms',
          'flow p50 ms',
          'flow p99 ms',
          'API CPU ms/op',
          'flow CPU ms/op',
          'flow main thread',
        ],
        rows,
        notes: [
          'A flow: GET /oidc/auth (confidential client, PKCE S256) → /oidc/interaction → GET /account/login (CSRF token) → POST /account/login → back through the interaction to the redirect URI with a code → POST /oauth/token (client_secret_basic). A new visitor each time (no cookies), one keep-alive connection per worker; the clients run in this process, as for the API sign-ins.',
          'CPU ms/op: this process (server, clients and, on PGlite, the database), all threads; main thread = everything but argon2 and signing on the thread pool.',
          'Rate limits raised (RAISED_SIGNIN_LIMITS); each worker signs in as its own user.',
        ],
      });
      tables.push(statementsTable(`[${store}] statements of one full code flow`, f.flowBreakdown));
      tables.push(statementsTable(`[${store}] statements of one API sign-in`, f.apiBreakdown));
      tables.push(
        profileTable(
          `[${store}] where code flows at ${f.profileConcurrency} in flight spend the main thread`,
          f.profile,
          f.profileOps,
        ),
      );
    }

    if (want('exchange')) {
      section(
        `2. authorization_code exchange alone, server on CPU ${SERVER_CPUS}, clients in a load generator on CPU 1`,
      );
      gen = await startLoadGenerator({ clientCpus: '1' });
      const reference = (await prepareTokenOps(app, sizes.exchange.workers)).exchange;
      const x = await measureExchange(
        store,
        app,
        publicOrigin,
        client,
        users.emails,
        gen,
        timing,
        sizes.exchange,
        log,
        reference,
      );
      data.exchange = x;
      const refBest = Math.max(...x.references.map((r) => r.perSecond));
      const ratios = x.runs.map((r, i) => (r.perSecond / x.references[i]!.perSecond) * 100);
      const rates = x.runs.map((r) => r.perSecond);
      const best = Math.max(...rates);
      const pinned = x.runs.every((r) => r.serverCpus === SERVER_CPUS);
      const exhausted = x.runs.some((r) => r.exhausted > 0);
      tables.push({
        title: `[${store}] POST /oauth/token grant_type=authorization_code (client_secret_basic, PKCE), ${sizes.exchange.workers} workers, ${sizes.exchange.durationMs / 1000} s windows`,
        columns: [
          'round',
          'operation',
          'exchanges/s',
          'p50 ms',
          'p99 ms',
          'server CPU ms/op',
          'main thread',
          'other threads',
          'server CPU busy',
          'client CPU ms/op',
          ...(store === 'postgres' ? ['PostgreSQL CPU ms/op'] : []),
        ],
        rows: [...x.runs, ...x.references].map((r) => [
          r.round,
          'minted' in r ? `authorization_code (${r.minted} codes)` : 'client credentials (yardstick)',
          ms(r.perSecond, 0),
          ms(r.latency.p50),
          ms(r.latency.p99),
          ms(r.cpuMsPerOp, 3),
          ms(r.mainCpuMsPerOp, 3),
          ms(r.otherCpuMsPerOp, 3),
          `${(r.serverCpuShare * 100).toFixed(0)} %`,
          ms(r.clientCpuMsPerOp, 3),
          ...(store === 'postgres' ? [ms(r.watchedCpuMsPerOp, 3)] : []),
        ]),
        notes: [
          `The app runs in the benchmark process, every thread pinned to CPU ${SERVER_CPUS} (taskset -a) during a window${store === 'pglite' ? ', PGlite included' : ''}; the clients in bench/loadgen-child.ts on CPU ${gen.clientCpus}, one keep-alive connection per worker.`,
          'Codes: made before each window by signed-in browsers (authorize → interaction → redirect; no password hash), OIDC_CODE_TTL=600; each is used once.',
          `Yardstick: the tokens bench's client-credentials exchange (POST /identity/resources/auth/v2/api-token) in the same rounds and setup; a loaded machine slows both alike. Code exchange / client credentials per round: ${ratios.map((x) => `${x.toFixed(0)} %`).join(', ')}.`,
          ...(exhausted
            ? [
                'Some workers ran out of codes before the window ended: the figure undercounts (BENCH_FRONTDOOR_CODES raises the codes per round).',
              ]
            : []),
          ...(store === 'postgres'
            ? [
                "PostgreSQL runs unpinned on the same machine; its backends' CPU for the app's connections is reported per exchange.",
              ]
            : []),
        ],
      });
      tables.push(statementsTable(`[${store}] statements of one code exchange`, x.breakdown));
      tables.push(
        profileTable(`[${store}] where a pinned exchange window spends the main thread`, x.profile, x.profileOps),
      );
      if (store === 'postgres')
        targets.push({
          name: 'authorization_code exchanges/s on one CPU (PostgreSQL)',
          target: `≥ ${EXCHANGE_TARGET}/s`,
          measured: `${best.toFixed(0)}/s (rounds ${spread(rates, 0)}; client credentials ${refBest.toFixed(0)}/s, ratio ${spread(ratios, 0)} %)${pinned ? '' : ', not pinned: taskset unavailable'}${exhausted ? ', codes ran out' : ''}`,
          met: pinned && !exhausted && best >= EXCHANGE_TARGET,
        });
    }
  } finally {
    await gen?.close();
    await app.close();
    await bdb.destroy();
  }
  return { area: 'frontdoor', store, tables, data, targets };
}
