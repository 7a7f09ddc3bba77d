import { loadConfigOrExit } from './config.ts';
import { createLogger } from './lib/log.ts';
import { createAgentApp, createSnapshotSync } from './modules/entitlements/index.ts';

/**
 * Entitlements agent entry point (`npm run agent`; also started by `npm start`): loads the stored snapshot, serves
 * decisions on AGENT_PORT, and follows the server's snapshot offset every AGENT_POLL_MS.
 * SIGTERM/SIGINT: stop polling, drain in-flight requests, exit 0.
 */
async function main(): Promise<void> {
  const config = loadConfigOrExit();
  const log = createLogger(config.logLevel).child({ component: 'agent' });
  const sync = createSnapshotSync({ ...config.agent, log });
  const app = await createAgentApp({
    engine: () => sync.engine,
    offset: () => sync.offset,
    logger: log,
    bodyLimit: config.bodyLimit,
  });
  await app.listen({ port: config.agentPort, host: config.agent.host });
  void sync.start();

  let stopping = false;
  const shutdown = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    log.info({ signal }, 'agent shutting down');
    setTimeout(() => process.exit(1), 10_000).unref();
    sync.stop();
    await app.close();
    process.exit(0);
  };
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
  process.on('SIGINT', () => void shutdown('SIGINT'));
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
