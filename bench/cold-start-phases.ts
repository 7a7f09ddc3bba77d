/**
 * Where a cold start goes: the steps of src/server.ts in the same order, each stamped with the time since the process
 * started (performance.now() counts from process start). Spawned by the tenants benchmark as
 * `node --import tsx bench/cold-start-phases.ts` with the server's environment; prints one JSON line and exits.
 * Modules are imported dynamically so that the first stamp comes before any of the app's modules load.
 */
const stamps: [string, number][] = [['node and the tsx loader started', performance.now()]];
const stamp = (label: string) => stamps.push([label, performance.now()]);

const { loadConfig } = await import('../src/config.ts');
const { createContext, createLogger } = await import('../src/context.ts');
const { buildApp } = await import('../src/routes.ts');
const { migrate } = await import('../src/storage/migrate.ts');
const { openDatabase } = await import('../src/storage/open.ts');
stamp('app modules imported (transpiled by tsx)');

const config = loadConfig();
const log = createLogger(config);
const db = await openDatabase(config);
stamp('database opened');
await migrate(db);
stamp('migrations checked');
const ctx = await createContext(config, db, log);
stamp('services created (signing keys loaded)');
await ctx.environment.bootstrap(config.clientId ? { clientId: config.clientId, apiKey: config.apiKey! } : undefined);
stamp('environment bootstrapped');
const app = await buildApp(ctx);
stamp('routes registered and compiled (buildApp)');
await app.listen({ port: config.port, host: config.host });
stamp('listening');

const phases = stamps.map(([label, at], i) => ({ label, at, ms: i === 0 ? at : at - stamps[i - 1][1] }));
process.stdout.write(`${JSON.stringify({ phases })}\n`);
await app.close();
await db.close();
process.exit(0);
