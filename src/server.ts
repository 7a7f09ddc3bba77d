import { loadConfigOrExit } from './config.ts';
import { createContext, createLogger } from './context.ts';
import { buildApp } from './routes.ts';
import { migrate } from './storage/migrate.ts';
import { DataDirInUse, openDatabase } from './storage/open.ts';
import { startMaintenance } from './storage/maintenance.ts';

/**
 * API server entry point: config → database → migrations → services → HTTP → job runner.
 * SIGTERM/SIGINT: stop accepting, drain in-flight requests, hand running jobs back, close the database, exit 0.
 */
async function main(): Promise<void> {
  const config = loadConfigOrExit();
  const log = createLogger(config);
  if (config.databaseUrl && !config.encryptionKey) {
    log.warn(
      'DATABASE_URL is set without GATEHOUSE_ENCRYPTION_KEY: signing keys are sealed with DATA_DIR/encryption.key; every instance sharing this database needs that same key',
    );
  }
  const db = await openDatabase(config);
  const { applied } = await migrate(db);
  if (applied.length) log.info({ applied }, 'migrations applied');

  const ctx = await createContext(config, db, log);
  const boot = await ctx.environment.bootstrap(
    config.clientId ? { clientId: config.clientId, apiKey: config.apiKey! } : undefined,
  );
  if (boot.generated) {
    // Printed once, to the terminal only (never to the log): the secret is stored hashed and cannot be shown again.
    process.stdout.write(
      `\n  Gatehouse environment credentials (shown once; store them now):\n` +
        `    GATEHOUSE_CLIENT_ID=${boot.generated.clientId}\n    GATEHOUSE_API_KEY=${boot.generated.secret}\n\n`,
    );
  }

  if (!config.agent.clientId) await ctx.environment.ensureLocalAgentCredential(config.agent.credentialsFile);

  let stopping = false;
  const app = await buildApp(ctx, { draining: () => stopping });
  await app.listen({ port: config.port, host: config.host });
  if (config.jobs.enabled) ctx.jobs.start();
  const stopMaintenance = startMaintenance(db, log);

  const shutdown = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    log.info({ signal }, 'shutting down: draining requests and jobs');
    // /ready now answers 503; give the balancer its check interval before refusing new connections.
    if (config.drainDelayMs) await new Promise((r) => setTimeout(r, config.drainDelayMs));
    const force = setTimeout(() => {
      log.error('shutdown took longer than 25 s; exiting');
      process.exit(1);
    }, 25_000);
    force.unref();
    await app.close();
    stopMaintenance();
    await ctx.jobs.stop();
    await db.close();
    log.info('stopped');
    process.exit(0);
  };
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
  process.on('SIGINT', () => void shutdown('SIGINT'));
}

main().catch((err) => {
  if (err instanceof DataDirInUse) {
    console.error(err.message);
    process.exit(2);
  }
  console.error(err);
  process.exit(1);
});
