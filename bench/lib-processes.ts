import { spawn } from 'node:child_process';
import http from 'node:http';
import { createServer, type AddressInfo } from 'node:net';
import { REPO_ROOT } from './lib-settings.ts';

// ---------------------------------------------------------------------------------------------------------------
// Processes

export function freePort(): Promise<number> {
  return new Promise((resolvePort, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as AddressInfo;
      s.close(() => resolvePort(port));
    });
  });
}

export interface ColdStart {
  /** Spawn to the first 200 from GET /health. */
  ms: number;
}

/**
 * Spawns `node --import tsx src/server.ts` with `env`, polls GET /health every 5 ms until it answers 200, then stops
 * the server with SIGTERM and waits for it to exit.
 */
export async function coldStart(env: Record<string, string>, timeoutMs = 60_000): Promise<ColdStart> {
  const port = await freePort();
  const start = performance.now();
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/server.ts'], {
    cwd: REPO_ROOT,
    env: {
      PATH: process.env.PATH ?? '',
      HOME: process.env.HOME ?? '/tmp',
      ...env,
      PORT: String(port),
      HOST: '127.0.0.1',
    },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr!.on('data', (c: Buffer) => (stderr += c.toString()));
  let exited: number | null | undefined;
  const exitP = new Promise<void>((r) => child.once('exit', (code) => ((exited = code), r())));
  const probe = () =>
    new Promise<number>((r) => {
      const req = http.get({ host: '127.0.0.1', port, path: '/health', agent: false }, (res) => {
        res.resume();
        res.on('end', () => r(res.statusCode ?? 0));
      });
      req.on('error', () => r(0));
    });
  try {
    for (;;) {
      if (exited !== undefined)
        throw new Error(`server exited with ${exited} before answering /health:\n${stderr.slice(-2000)}`);
      if (performance.now() - start > timeoutMs)
        throw new Error(`server did not answer /health within ${timeoutMs} ms:\n${stderr.slice(-2000)}`);
      if ((await probe()) === 200) break;
      await new Promise((r) => setTimeout(r, 5));
    }
    return { ms: performance.now() - start };
  } finally {
    if (exited === undefined) child.kill('SIGTERM');
    await exitP;
  }
}

/** Runs `node --import tsx <script>` in the repository with `env`; resolves with the last stdout line that is JSON. */
export function runTsxScript(script: string, env: Record<string, string>, timeoutMs = 60_000): Promise<any> {
  return new Promise((resolveRun, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', script], {
      cwd: REPO_ROOT,
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.stdout!.on('data', (c: Buffer) => (out += c.toString()));
    child.stderr!.on('data', (c: Buffer) => (err += c.toString()));
    child.once('exit', (code) => {
      clearTimeout(timer);
      const line = out
        .trim()
        .split('\n')
        .reverse()
        .find((l) => l.startsWith('{"phases"'));
      if (code !== 0 || !line) reject(new Error(`${script} exited with ${code}:\n${err.slice(-2000)}`));
      else resolveRun(JSON.parse(line));
    });
  });
}
