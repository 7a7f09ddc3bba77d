import { spawn, type ChildProcess } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * `npm start`: a supervisor of the API server and the entitlements agent, two child processes (wire.md: the agent
 * is a second process). A child that dies on its own is restarted with backoff and the other keeps running: the
 * agent exists to keep answering while the server is down. SIGTERM/SIGINT are forwarded to both, which drain; the
 * supervisor exits when both have stopped, with the first non-zero exit code (0 after a clean drain).
 * AGENT_ENABLED=false supervises the server alone.
 */
const here = dirname(fileURLToPath(import.meta.url));
const names = ['server', ...(/^(0|false|no|off)$/i.test(process.env.AGENT_ENABLED ?? '') ? [] : ['agent'])];

/** First restart after 0.5 s, doubling to 8 s; a child that ran a minute has its backoff reset. */
const BACKOFF_FIRST_MS = 500;
const BACKOFF_MAX_MS = 8_000;
const STABLE_MS = 60_000;
/** loadConfigOrExit's exit code. */
const EXIT_CONFIG = 2;

interface Child {
  name: string;
  proc?: ChildProcess;
  startedAt: number;
  delay: number;
  timer?: NodeJS.Timeout;
}

let stopping = false;
let code: number | undefined;
const children: Child[] = names.map((name) => ({ name, startedAt: 0, delay: BACKOFF_FIRST_MS }));

function log(msg: string) {
  process.stderr.write(`${JSON.stringify({ level: 40, time: Date.now(), component: 'supervisor', msg })}\n`);
}

function run(c: Child) {
  c.timer = undefined;
  c.startedAt = Date.now();
  const proc = spawn(process.execPath, [...process.execArgv, join(here, `${c.name}.ts`)], {
    stdio: 'inherit',
    env: process.env,
  });
  c.proc = proc;
  proc.on('exit', (exitCode, signal) => {
    c.proc = undefined;
    if (stopping) {
      if (exitCode !== 0 && code === undefined) code = exitCode ?? 1;
      return exitWhenAllStopped();
    }
    if (exitCode === EXIT_CONFIG) {
      // A configuration error (or a DATA_DIR another process holds) will not heal by restarting: stop everything.
      log(`${c.name} refused to start (exit code ${EXIT_CONFIG}); stopping`);
      code = EXIT_CONFIG;
      stopping = true;
      for (const o of children) o.proc?.kill('SIGTERM');
      return exitWhenAllStopped();
    }
    if (Date.now() - c.startedAt > STABLE_MS) c.delay = BACKOFF_FIRST_MS;
    log(`${c.name} (pid ${proc.pid}) exited (${signal ?? `code ${exitCode}`}); restarting in ${c.delay} ms`);
    c.timer = setTimeout(() => run(c), c.delay);
    c.delay = Math.min(c.delay * 2, BACKOFF_MAX_MS);
  });
}

function exitWhenAllStopped() {
  if (children.every((c) => !c.proc)) process.exit(code ?? 0);
}

for (const c of children) run(c);
for (const sig of ['SIGTERM', 'SIGINT'] as const) {
  process.on(sig, () => {
    stopping = true;
    for (const c of children) {
      if (c.timer) clearTimeout(c.timer);
      c.timer = undefined;
      c.proc?.kill(sig);
    }
    exitWhenAllStopped();
  });
}
