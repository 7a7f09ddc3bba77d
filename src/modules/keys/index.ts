export { createKeysService, type KeysService, type Algorithm } from './service.ts';
export { keysRoutes } from './routes.ts';
export { loadKeyEncryptionKey } from './kek.ts';
