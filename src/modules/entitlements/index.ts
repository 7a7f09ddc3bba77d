export { createEntitlementsService, type EntitlementsService } from './service.ts';
export { entitlementsRoutes } from './routes.ts';
export * as engine from './engine/index.ts';
// The entitlements agent (src/agent.ts, its own process): the decision server and the snapshot follower.
export { createAgentApp } from './agent/app.ts';
export { createSnapshotSync } from './agent/sync.ts';
