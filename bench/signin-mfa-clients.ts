import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { REPO_ROOT, stats, type HttpClient } from './lib.ts';

// ---------------------------------------------------------------------------------------------------------------
// The workers' flows: in this process (drive) or in a client process of their own (remoteClients)

export interface Flow {
  kind: 'plain' | 'mfa' | 'floor';
  run(c: HttpClient, worker: number): Promise<number>;
}

/** Runs `flow` on every worker for `seconds`; answers completed flows and per-flow latencies (ms). */
export async function drive(clients: HttpClient[], flow: Flow, seconds: number) {
  const samples: number[] = [];
  const end = performance.now() + seconds * 1000;
  const start = performance.now();
  await Promise.all(
    clients.map(async (c, w) => {
      while (performance.now() < end) samples.push(await flow.run(c, w));
    }),
  );
  const elapsed = (performance.now() - start) / 1000;
  return { flows: samples.length, perSecond: samples.length / elapsed, ...stats(samples) };
}

/**
 * The clients in a process of their own (bench/signin-mfa-client.ts), running the same two flows: the default, so the
 * server's process does the server's work only (in-process clients would charge the server's event loop with the
 * clients' work, twice as much for the two-request MFA flow). MFA_BENCH_CLIENT=inprocess keeps them in this process.
 */
export async function remoteClients(setup: Record<string, unknown>) {
  const child = spawn(process.execPath, ['--import', 'tsx', join(REPO_ROOT, 'bench', 'signin-mfa-client.ts')], {
    cwd: REPO_ROOT,
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const next = (id?: number) =>
    new Promise<any>((resolve, reject) => {
      const onExit = (code: number | null) => reject(new Error(`bench client process exited with ${code}`));
      const onMessage = (m: any) => {
        if (id !== undefined && m.id !== id) return;
        child.off('message', onMessage);
        child.off('exit', onExit);
        resolve(m);
      };
      child.on('message', onMessage);
      child.once('exit', onExit);
    });
  const ready = next();
  child.send({ type: 'setup', ...setup });
  await ready;
  let ids = 0;
  return {
    async drive(kind: Flow['kind'], seconds: number) {
      const id = ++ids;
      const done = next(id);
      child.send({ type: 'drive', id, kind, seconds });
      const m = await done;
      if (m.error) throw new Error(m.error);
      return {
        flows: m.flows as number,
        perSecond: m.perSecond as number,
        clientCpuMs: m.cpuMs as number,
        ...stats(m.samples as number[]),
      };
    },
    close() {
      if (child.exitCode === null && child.connected) child.send({ type: 'close' });
    },
  };
}
