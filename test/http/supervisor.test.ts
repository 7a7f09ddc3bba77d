import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import {
  answers,
  cleanUpProcesses,
  freePort,
  freshDatabase,
  spawnEntry,
  startServer,
  stop,
  tempDir,
  waitFor,
} from '../helpers/processes.ts';

/** `npm start` as a supervisor, readiness and drain, and one process per PGlite DATA_DIR: real processes. */

const RESTART_BOUND_MS = 30_000;

const childOf = (parent: number, entry: string): number => {
  const out = execFileSync('ps', ['-o', 'pid=,args=', '--ppid', String(parent)], { encoding: 'utf8' });
  const line = out.split('\n').find((l) => l.includes(entry));
  assert.ok(line, `a child running ${entry} under ${parent}:\n${out}`);
  return Number(line.trim().split(/\s+/)[0]);
};

async function decide(agentPort: number) {
  const res = await fetch(`http://127.0.0.1:${agentPort}/v1/data/e10s/features/is_entitled_to_input_feature`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      input: {
        subjectContext: { tenantId: 'nobody', userId: null, permissions: [], attributes: {} },
        requestContext: { featureKey: 'none' },
      },
    }),
  });
  return { status: res.status, body: (await res.json()) as { result: { result: boolean } } };
}

describe('npm start supervises the server and the agent', () => {
  after(cleanUpProcesses);

  test('a killed server is restarted while the agent keeps answering; a killed agent too; SIGTERM drains both', async () => {
    const dataDir = tempDir(mkdtempSync(join(tmpdir(), 'gatehouse-start-')));
    const [port, agentPort] = [await freePort(), await freePort()];
    const { proc, output } = spawnEntry('src/start.ts', {
      PORT: String(port),
      AGENT_PORT: String(agentPort),
      DATA_DIR: dataDir,
      AGENT_POLL_MS: '200',
      ...(await freshDatabase()),
    });
    const ready = () => answers(`http://127.0.0.1:${port}/ready`);
    // With no credentials configured the agent still loads a snapshot (a read-only credential the server made).
    await waitFor(() => answers(`http://127.0.0.1:${agentPort}/health?bundles`), 120_000, output);
    await waitFor(ready, 120_000, output);
    assert.equal((await decide(agentPort)).body.result.result, false);

    const server = childOf(proc.pid!, 'server.ts');
    process.kill(server, 'SIGKILL');
    await waitFor(async () => !(await ready()), 5_000, output);
    // The agent answers from its snapshot while the server is down.
    const during = await decide(agentPort);
    assert.equal(during.status, 200);
    // The restart itself is 0.5 s; the rest is a server start (about 3–5 s here when the machine is quiet). The bound
    // leaves room for a CI machine running another test file beside this one.
    const back = await waitFor(ready, RESTART_BOUND_MS, output);
    console.log(`  server back ${back} ms after kill -9`);
    assert.notEqual(childOf(proc.pid!, 'server.ts'), server, 'a new server process');

    const agent = childOf(proc.pid!, 'agent.ts');
    process.kill(agent, 'SIGKILL');
    await waitFor(async () => childOf(proc.pid!, 'agent.ts') !== agent, RESTART_BOUND_MS, output);
    await waitFor(() => answers(`http://127.0.0.1:${agentPort}/health?bundles`), RESTART_BOUND_MS, output);
    assert.ok(await ready(), 'the server kept running while the agent restarted');

    assert.equal(await stop(proc), 0, output());
  });

  test('a configuration error is not restarted: npm start exits 2', async () => {
    const { proc, output } = spawnEntry('src/start.ts', { PORT: 'abc', AGENT_ENABLED: 'false' });
    const code = await new Promise((resolve) => proc.once('exit', resolve));
    assert.equal(code, 2, output());
    assert.match(output(), /PORT must be/);
  });
});

describe('readiness and one process per PGlite directory', () => {
  after(cleanUpProcesses);

  test('/ready answers 503 during the drain delay after SIGTERM; /health stays live', async () => {
    const dataDir = tempDir(mkdtempSync(join(tmpdir(), 'gatehouse-ready-')));
    const r = await startServer({ DATA_DIR: dataDir, DRAIN_DELAY_MS: '1500', ...(await freshDatabase()) });
    assert.ok(await answers(r.url('/ready')));
    const exited = stop(r.proc);
    await waitFor(() => answers(r.url('/ready'), 503), 1_000, r.stdout);
    assert.ok(await answers(r.url('/health')), 'still live while draining');
    assert.equal(await exited, 0);
  });

  test('a second server on the same PGlite DATA_DIR stops with a clear error; a killed one leaves no lock', async (t) => {
    if (process.env.TEST_DATABASE_URL) return t.skip('PGlite only: a PostgreSQL server is shared by design');
    const dataDir = tempDir(mkdtempSync(join(tmpdir(), 'gatehouse-lock-')));
    const first = await startServer({ DATA_DIR: dataDir });
    const second = spawnEntry('src/server.ts', { PORT: String(await freePort()), DATA_DIR: dataDir });
    const code = await new Promise((resolve) => second.proc.once('exit', resolve));
    assert.equal(code, 2, second.output());
    assert.match(second.output(), /DATA_DIR .* is in use by process \d+/);
    await stop(first.proc, 'SIGKILL');
    const third = await startServer({ DATA_DIR: dataDir });
    assert.ok(await answers(third.url('/ready')));
    assert.equal(await stop(third.proc), 0);
  });
});
