import { spawn, type ChildProcess } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * `npm start`: the API server and the entitlements agent as two child processes (wire.md: the agent is a second
 * process). Signals are forwarded to both; the first child to exit on its own stops the other; the exit code is the
 * first non-zero one (0 when both stop cleanly after SIGTERM). AGENT_ENABLED=false starts the server alone.
 */
const here = dirname(fileURLToPath(import.meta.url));
const entries = [
  join(here, 'server.ts'),
  ...(/^(0|false|no|off)$/i.test(process.env.AGENT_ENABLED ?? '') ? [] : [join(here, 'agent.ts')]),
];
const children: ChildProcess[] = entries.map((entry) =>
  spawn(process.execPath, [...process.execArgv, entry], { stdio: 'inherit', env: process.env }),
);

let code: number | undefined;
let stopping = false;
let alive = children.length;
const stopAll = (signal: NodeJS.Signals) => {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill(signal);
};
for (const c of children) {
  c.on('exit', (exitCode, signal) => {
    alive--;
    const own = exitCode ?? (signal ? 1 : 0);
    if (own !== 0 && code === undefined) code = own;
    if (!stopping) {
      stopping = true;
      stopAll('SIGTERM');
    }
    if (alive === 0) process.exit(code ?? 0);
  });
}
for (const sig of ['SIGTERM', 'SIGINT'] as const) {
  process.on(sig, () => {
    stopping = true;
    stopAll(sig);
  });
}
