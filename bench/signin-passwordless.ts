import { SMTPServer } from 'smtp-server';
import type { AddressInfo } from 'node:net';
import { codeIn, parseMail } from '../test/helpers/mailbox.ts';
import { ms, openBenchDb, startBenchApp, stats, type AreaResult, type BenchOptions, type Table } from './lib.ts';

/**
 * Full email-code passwordless sign-in: pre-login, the OTC email delivered by the job runner over SMTP to a
 * local server, the code read from the received message, post-login with tokens. 10 concurrent users, each running
 * flows back to back; flows per second and latency percentiles of whole flows.
 *
 * Register in bench/run.ts under area `signin` (section `passwordless`): `passwordlessSignin(o)` answers the table,
 * data and targets of that section; `run(o)` wraps them into an AreaResult for a standalone run.
 */

const CONCURRENCY = 10;

/** A local SMTP server that hands each received message to the waiter of its recipient at once (no polling). */
async function startInbox() {
  const waiters = new Map<string, (text: string) => void>();
  let received = 0;
  const server = new SMTPServer({
    secure: false,
    disabledCommands: ['STARTTLS'],
    authOptional: true,
    logger: false,
    closeTimeout: 200,
    onData(stream, session, cb) {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => {
        received++;
        const mail = parseMail(Buffer.concat(chunks).toString('utf8'));
        for (const r of session.envelope.rcptTo) {
          const w = waiters.get(r.address.toLowerCase());
          if (w) {
            waiters.delete(r.address.toLowerCase());
            w(mail.text);
          }
        }
        cb();
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.server.address() as AddressInfo).port,
    received: () => received,
    /** Resolves with the text of the next message to `email`; call before triggering the send. */
    next(email: string, timeoutMs = 30_000): Promise<string> {
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`no mail to ${email} within ${timeoutMs} ms`)), timeoutMs);
        waiters.set(email, (text) => {
          clearTimeout(timer);
          resolve(text);
        });
      });
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

export async function passwordlessSignin(
  o: BenchOptions,
): Promise<{ tables: Table[]; data: Record<string, unknown>; targets: AreaResult['targets'] }> {
  const flowsPerUser = o.quick ? 5 : 50;
  const bdb = await openBenchDb(o.store, 'signin-passwordless');
  const inbox = await startInbox();
  const app = await startBenchApp(bdb, bdb.db, {
    jobs: true,
    // Every flow comes from 127.0.0.1 and each user signs in many times: raise the code limiter so the flow is measured.
    env: { CODE_RATE_LIMIT_PER_IP: '1000000', CODE_RATE_LIMIT_PER_IDENTIFIER: '1000000', JOB_POLL_MS: '10' },
  });
  try {
    const v = app.client;
    const check = (r: { status: number; body: unknown }, want: number, what: string) => {
      if (r.status !== want) throw new Error(`${what}: ${r.status} ${JSON.stringify(r.body)}`);
    };
    check(
      await v.request('POST', '/identity/resources/mail/v1/configurations', {
        body: {
          provider: 'smtp',
          host: '127.0.0.1',
          port: inbox.port,
          secure: false,
          senderEmail: 'no-reply@bench.test',
          fromName: 'Bench',
        },
      }),
      201,
      'mail configuration',
    );
    check(
      await v.request('POST', '/identity/resources/configurations/v1/auth/strategies', {
        body: { Code: { active: true } },
      }),
      200,
      'enable email code',
    );
    check(
      await v.request('POST', '/tenants/resources/tenants/v1', {
        body: { tenantId: 'bench-pl', name: 'Bench passwordless' },
      }),
      201,
      'account',
    );
    const emails: string[] = [];
    for (let i = 0; i < CONCURRENCY; i++) {
      const email = `pl-${i}@bench.test`;
      check(
        await v.request('POST', '/identity/resources/users/v1', {
          body: { email, name: `User ${i}` },
          headers: { 'gatehouse-tenant-id': 'bench-pl' },
        }),
        201,
        'user',
      );
      emails.push(email);
    }

    const samples: number[] = [];
    const phases = { prelogin: [] as number[], delivery: [] as number[], postlogin: [] as number[] };
    async function flow(email: string, c: ReturnType<typeof app.newClient>, record: boolean) {
      const t0 = performance.now();
      const mail = inbox.next(email);
      const pre = await c.request('POST', '/identity/resources/auth/v1/passwordless/code/prelogin', {
        body: { email },
      });
      check(pre, 201, 'prelogin');
      const t1 = performance.now();
      const code = codeIn({ text: await mail });
      const t2 = performance.now();
      const post = await c.request('POST', '/identity/resources/auth/v1/passwordless/code/postlogin', {
        body: { token: code, email },
      });
      check(post, 201, 'postlogin');
      if (typeof post.body?.accessToken !== 'string') throw new Error('postlogin gave no access token');
      if (record) {
        samples.push(performance.now() - t0);
        phases.prelogin.push(t1 - t0);
        phases.delivery.push(t2 - t1);
        phases.postlogin.push(performance.now() - t2);
      }
    }
    // Warm-up: one untimed flow per user.
    const clients = emails.map(() => app.newClient());
    await Promise.all(emails.map((e, i) => flow(e, clients[i], false)));
    const start = performance.now();
    await Promise.all(
      emails.map(async (e, i) => {
        for (let n = 0; n < flowsPerUser; n++) await flow(e, clients[i], true);
      }),
    );
    const wall = performance.now() - start;
    const s = stats(samples);
    const perSecond = samples.length / (wall / 1000);
    o.log(
      `signin/passwordless: ${samples.length} flows in ${(wall / 1000).toFixed(1)} s = ${perSecond.toFixed(1)} flows/s, p50 ${s.p50.toFixed(1)} ms`,
    );
    const row = (name: string, x: number[]) => {
      const st = stats(x);
      return [name, ms(st.p50), ms(st.p90), ms(st.p99), ms(st.mean)];
    };
    const tables: Table[] = [
      {
        title: `Passwordless email-code sign-in, ${CONCURRENCY} concurrent users (${o.store})`,
        columns: ['phase', 'p50 ms', 'p90 ms', 'p99 ms', 'mean ms'],
        rows: [
          row('whole flow', samples),
          row('pre-login request', phases.prelogin),
          row('delivery (job + SMTP)', phases.delivery),
          row('post-login request', phases.postlogin),
        ],
        notes: [
          `${samples.length} flows, ${perSecond.toFixed(1)} flows/s; job runner poll 10 ms; SMTP to a local smtp-server`,
        ],
      },
    ];
    return {
      tables,
      data: {
        flows: samples.length,
        wallMs: wall,
        flowsPerSecond: perSecond,
        concurrency: CONCURRENCY,
        flow: s,
        mailsReceived: inbox.received(),
      },
      targets: [],
    };
  } finally {
    await app.close();
    await inbox.close();
    await bdb.destroy();
  }
}

export async function run(o: BenchOptions): Promise<AreaResult> {
  const r = await passwordlessSignin(o);
  return { area: 'signin', store: o.store, tables: r.tables, data: { passwordless: r.data }, targets: r.targets };
}
