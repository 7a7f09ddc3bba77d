/**
 * Statements per password sign-in and per token refresh, through HTTP (not a timing benchmark: counts are exact and
 * do not depend on the machine's load).
 *
 *   npx tsx bench/statements.ts [--store pglite|postgres] [--n 5]
 *
 * The app is `startBenchApp` over a Db wrapped in a counting proxy. Each request is recorded on its own (requests are
 * sequential, the job runner is not started), and every statement is listed with its count per call; a transaction
 * counts BEGIN and COMMIT as two more round trips. Two scenarios:
 *  - defaults: a user of one account with the account's default roles, nothing else configured;
 *  - features on: the account has an active IP allow list admitting 127.0.0.1, the user is in a group with a role,
 *    the account has a session policy (idle timeout, concurrent-session limit) and an MFA policy (DontForce).
 */
import {
  callStats,
  countingDb,
  destroyAllBenchDbs,
  openBenchDb,
  RAISED_SIGNIN_LIMITS,
  startBenchApp,
  type BenchApp,
  type CountedCall as Call,
  type StoreKind,
} from './lib.ts';

const AUTH = '/identity/resources/auth/v1';
const PASSWORD = 'Bench-statements-0123!';

function summarise(label: string, calls: Call[]) {
  // The audit hook (src/modules/audit, onSend) stages every audited request's entry with one INSERT before the answer
  // (the chainer, a job-runner loop that is not started here, moves it into the chain later, batched).
  const { n, statements, transactions, roundTrips, audit, perCall } = callStats(calls);
  // An audit transaction is one that locks the chain head (a staging INSERT is a plain statement, no transaction).
  const auditTx = calls.reduce((a, c) => a + (c.statements.some((s) => /\baudit_chain\b/.test(s)) ? 1 : 0), 0) / n;
  const lines = [
    `### ${label}: ${statements.toFixed(1)} statements, ${transactions.toFixed(1)} transactions, ${roundTrips.toFixed(1)} round trips per call (${n} calls); of which the audit hook ${audit.toFixed(1)} statements in ${auditTx.toFixed(1)} transactions`,
    '',
    '| per call | statement |',
    '|---:|---|',
    ...perCall.map(
      ({ sql, perCall: k }) =>
        `| ${k.toFixed(1)} | \`${sql.slice(0, 160).replace(/\|/g, '\\|')}${sql.length > 160 ? '…' : ''}\` |`,
    ),
    '',
  ];
  return { statements, transactions, roundTrips, audit, auditTx, text: lines.join('\n') };
}

async function expect(r: Promise<{ status: number; body: any }>, status: number, what: string) {
  const got = await r;
  if (got.status !== status) throw new Error(`${what}: HTTP ${got.status} ${JSON.stringify(got.body).slice(0, 300)}`);
  return got.body;
}

async function setUp(app: BenchApp, account: string, featuresOn: boolean): Promise<string> {
  const c = app.client;
  const h = { 'gatehouse-tenant-id': account };
  await expect(
    c.request('POST', '/tenants/resources/tenants/v1', { body: { tenantId: account, name: `Statements ${account}` } }),
    201,
    'create account',
  );
  const email = `${account}@statements.example`;
  const user = await expect(
    c.request('POST', '/identity/resources/users/v1', {
      body: { email, password: PASSWORD, name: 'Statements' },
      headers: h,
    }),
    201,
    'create user',
  );
  if (featuresOn) {
    const roles = await expect(c.request('GET', '/identity/resources/roles/v1', { headers: h }), 200, 'list roles');
    const roleId = (Array.isArray(roles) ? roles : roles.items)[0].id as string;
    const group = await expect(
      c.request('POST', '/identity/resources/groups/v1', { body: { name: 'Statements group' }, headers: h }),
      201,
      'create group',
    );
    await expect(
      c.request('POST', `/identity/resources/groups/v1/${group.id}/roles`, { body: { roleIds: [roleId] }, headers: h }),
      201,
      'group roles',
    );
    await expect(
      c.request('POST', `/identity/resources/groups/v1/${group.id}/users`, {
        body: { userIds: [user.id] },
        headers: h,
      }),
      201,
      'group users',
    );
    const IP = '/identity/resources/configurations/v1/restrictions/ip';
    await expect(
      c.request('POST', IP, { body: { ip: '127.0.0.1/32', strategy: 'ALLOW' }, headers: h }),
      201,
      'ip rule',
    );
    await expect(
      c.request('POST', `${IP}/config`, { body: { strategy: 'ALLOW', isActive: true }, headers: h }),
      201,
      'ip config',
    );
    await expect(
      c.request('POST', '/identity/resources/configurations/sessions/v1', {
        body: {
          sessionIdleTimeoutConfiguration: { isActive: true, timeout: 3600 },
          sessionConcurrentConfiguration: { isActive: true, maxSessions: 50 },
        },
        headers: h,
      }),
      201,
      'session policy',
    );
    const mfa = await c.request('PUT', '/identity/resources/configurations/v1/mfa-policy', {
      body: { enforceMFAType: 'DontForce' },
      headers: h,
    });
    if (mfa.status >= 300) throw new Error(`mfa policy: HTTP ${mfa.status} ${JSON.stringify(mfa.body).slice(0, 300)}`);
  }
  return email;
}

async function scenario(
  app: BenchApp,
  rec: ReturnType<typeof countingDb>,
  label: string,
  featuresOn: boolean,
  n: number,
) {
  const email = await setUp(app, `stmt-${featuresOn ? 'on' : 'off'}`, featuresOn);
  const client = app.newClient();
  const signIn = () => client.request('POST', `${AUTH}/user`, { body: { email, password: PASSWORD } });
  // Warm-up (first-use caches), not recorded.
  let token = (await expect(signIn(), 200, 'sign-in')).refreshToken as string;
  token = (
    await expect(
      client.request('POST', `${AUTH}/user/token/refresh`, { body: { refreshToken: token } }),
      201,
      'refresh',
    )
  ).refreshToken;
  const signIns: Call[] = [];
  const refreshes: Call[] = [];
  for (let i = 0; i < n; i++) {
    const s = await rec.record(signIn);
    if (s.result.status !== 200) throw new Error(`sign-in: HTTP ${s.result.status} ${JSON.stringify(s.result.body)}`);
    signIns.push(s.call);
    token = s.result.body.refreshToken;
    for (let j = 0; j < 2; j++) {
      const r = await rec.record(() =>
        client.request('POST', `${AUTH}/user/token/refresh`, { body: { refreshToken: token } }),
      );
      if (r.result.status !== 201) throw new Error(`refresh: HTTP ${r.result.status} ${JSON.stringify(r.result.body)}`);
      refreshes.push(r.call);
      token = r.result.body.refreshToken;
    }
  }
  return { signIn: summarise(`${label}: sign-in`, signIns), refresh: summarise(`${label}: refresh`, refreshes) };
}

async function main() {
  const args = process.argv.slice(2);
  const arg = (name: string) => {
    const i = args.indexOf(name);
    return i >= 0 ? args[i + 1] : undefined;
  };
  const kind = (arg('--store') ?? 'pglite') as StoreKind;
  const n = Number(arg('--n') ?? 5);
  const bdb = await openBenchDb(kind, 'statements');
  const rec = countingDb(bdb.db);
  const app = await startBenchApp(bdb, rec.db, { env: RAISED_SIGNIN_LIMITS });
  try {
    const out: string[] = [`## Statements per call (${kind})`, ''];
    const rows: string[] = [
      '| scenario | sign-in: statements / transactions / round trips | of which audit hook | refresh: statements / transactions / round trips | of which audit hook |',
      '|---|---|---|---|---|',
    ];
    for (const [label, on] of [
      ['defaults', false],
      ['features on', true],
    ] as const) {
      const r = await scenario(app, rec, label, on, n);
      const f = (s: ReturnType<typeof summarise>) =>
        `${s.statements.toFixed(1)} / ${s.transactions.toFixed(1)} / ${s.roundTrips.toFixed(1)}`;
      const a = (s: ReturnType<typeof summarise>) =>
        `${s.audit.toFixed(1)} / ${s.auditTx.toFixed(1)} / ${(s.audit + 2 * s.auditTx).toFixed(1)}`;
      rows.push(`| ${label} | ${f(r.signIn)} | ${a(r.signIn)} | ${f(r.refresh)} | ${a(r.refresh)} |`);
      out.push(r.signIn.text, r.refresh.text);
    }
    console.log([...out, ...rows, ''].join('\n'));
  } finally {
    await app.close();
    await bdb.destroy();
  }
}

main().catch(async (err) => {
  console.error(err);
  await destroyAllBenchDbs();
  process.exit(1);
});
