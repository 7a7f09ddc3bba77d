import http from 'node:http';
import { stepAt, totpCode } from '../src/modules/mfa/totp.ts';

/**
 * The HTTP clients of bench/signin-mfa.ts in a process of their own (as a load generator would be), so the server's
 * process is charged with the server's work only: the MFA flow makes two requests per flow and the password flow one,
 * so clients in the server's process would charge the MFA flow twice the client work on the server's event loop.
 * Imports nothing of the application but the TOTP helper (otpauth).
 *
 * Messages in:  {type: 'setup', baseUrl, floorUrl, password, secret, plainEmails, mfaEmails, concurrency, usersPerWorker}
 *               {type: 'drive', id, kind: 'plain' | 'mfa' | 'floor', seconds}   {type: 'close'}
 * Messages out: {type: 'ready'}; {type: 'done', id, flows, perSecond, samples, cpuMs (this process, the round), error?}
 */

const AUTH = '/identity/resources/auth/v1/user';

interface Setup {
  type: 'setup';
  baseUrl: string;
  /** The floor's bare HTTP server (bench/signin-mfa.ts startFloorServer). */
  floorUrl: string;
  password: string;
  secret: string;
  plainEmails: string[];
  mfaEmails: string[];
  concurrency: number;
  usersPerWorker: number;
}

let setup: Setup;
let agents: http.Agent[] = [];

function request(
  w: number,
  path: string,
  body: unknown,
  base = setup.baseUrl,
): Promise<{ status: number; body: any; ms: number }> {
  const url = new URL(base);
  const payload = Buffer.from(JSON.stringify(body));
  const headers = { accept: 'application/json', 'content-type': 'application/json', 'content-length': payload.length };
  return new Promise((resolve, reject) => {
    const start = performance.now();
    const req = http.request(
      { host: url.hostname, port: url.port, method: 'POST', path, headers, agent: agents[w] },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const ms = performance.now() - start;
          const raw = Buffer.concat(chunks).toString('utf8');
          let parsed: unknown = raw;
          try {
            parsed = raw ? JSON.parse(raw) : undefined;
          } catch {
            /* not JSON */
          }
          resolve({ status: res.statusCode ?? 0, body: parsed, ms });
        });
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.write(payload);
    req.end();
  });
}

const fail = (what: string, r: { status: number; body: unknown }) =>
  new Error(`${what}: ${r.status} ${JSON.stringify(r.body).slice(0, 300)}`);

let plainNext = 0;
async function plain(w: number): Promise<number> {
  const email = setup.plainEmails[plainNext++ % setup.plainEmails.length];
  const r = await request(w, AUTH, { email, password: setup.password });
  if (r.status !== 200 || !r.body.accessToken) throw fail('plain sign-in', r);
  return r.ms;
}

// Worker w owns users w, w + concurrency, ...; lastStep per user keeps each code single-use and inside the window.
const lastStep = new Map<string, number>();
let cursor: number[] = [];
async function mfa(w: number): Promise<number> {
  const { concurrency, usersPerWorker, mfaEmails } = setup;
  let email = '';
  let step = 0;
  for (let tries = 0; ; tries++) {
    if (tries > usersPerWorker) throw new Error('every user of this worker used its window; raise usersPerWorker');
    email = mfaEmails[w + concurrency * (cursor[w]++ % usersPerWorker)];
    const now = stepAt(Date.now());
    // The server accepts the steps now-1..now+1; in a window's last second now-1 may expire in flight, so not it.
    const lowest = Date.now() % 30_000 < 29_000 ? now - 1 : now;
    step = Math.max(lowest, (lastStep.get(email) ?? -Infinity) + 1);
    if (step <= now + 1) break;
  }
  lastStep.set(email, step);
  const r = await request(w, AUTH, { email, password: setup.password });
  if (r.status !== 200 || !r.body.mfaToken) throw fail('mfa sign-in', r);
  const r2 = await request(w, `${AUTH}/mfa/verify`, { mfaToken: r.body.mfaToken, value: totpCode(setup.secret, step) });
  if (r2.status !== 201 || !r2.body.accessToken) throw fail('mfa verify', r2);
  return r.ms + r2.ms;
}

/** The floor: the password flow, then one more request of the MFA verify's size to a bare route (no work behind it). */
async function floor(w: number): Promise<number> {
  const ms = await plain(w);
  const r = await request(w, '/floor', { mfaToken: 'x'.repeat(43), value: '123456' }, setup.floorUrl);
  if (r.status !== 201) throw fail('floor request', r);
  return ms + r.ms;
}

async function drive(id: number, kind: 'plain' | 'mfa' | 'floor', seconds: number) {
  const flow = kind === 'plain' ? plain : kind === 'mfa' ? mfa : floor;
  const samples: number[] = [];
  const cpuStart = process.cpuUsage();
  const start = performance.now();
  const end = start + seconds * 1000;
  try {
    await Promise.all(
      agents.map(async (_, w) => {
        while (performance.now() < end) samples.push(await flow(w));
      }),
    );
    const elapsed = (performance.now() - start) / 1000;
    const cpu = process.cpuUsage(cpuStart);
    process.send!({
      type: 'done',
      id,
      flows: samples.length,
      perSecond: samples.length / elapsed,
      samples,
      cpuMs: (cpu.user + cpu.system) / 1000,
    });
  } catch (err) {
    process.send!({ type: 'done', id, error: String((err as Error).message ?? err) });
  }
}

process.on(
  'message',
  (m: Setup | { type: 'drive'; id: number; kind: 'plain' | 'mfa' | 'floor'; seconds: number } | { type: 'close' }) => {
    if (m.type === 'setup') {
      setup = m;
      // One keep-alive connection per worker and origin (maxSockets counts per origin; the floor's server is another).
      agents = Array.from({ length: m.concurrency }, () => new http.Agent({ keepAlive: true, maxSockets: 1 }));
      cursor = new Array(m.concurrency).fill(0);
      process.send!({ type: 'ready' });
    } else if (m.type === 'drive') void drive(m.id, m.kind, m.seconds);
    else {
      for (const a of agents) a.destroy();
      process.disconnect();
    }
  },
);
