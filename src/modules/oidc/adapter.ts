import type { Db } from '../../storage/db.ts';
import * as store from './store.ts';

type Payload = Record<string, unknown>;

/**
 * oidc-provider's storage adapter over oidc_payloads: one instance per model name (Session, Interaction, Grant,
 * AuthorizationCode, AccessToken, RefreshToken, ...). `Client` is not stored here: clients are the environment's
 * applications, read through `clientMetadata`. A consumed row answers `consumed` (epoch seconds), which is how the
 * provider refuses a replayed code or refresh token and revokes what the grant issued.
 */
export function adapterClass(db: Db, clientMetadata: (id: string) => Promise<Payload | undefined>) {
  const answer = (row: store.PayloadRow | undefined): Payload | undefined =>
    row
      ? { ...row.payload, ...(row.consumed_at ? { consumed: Math.floor(row.consumed_at.getTime() / 1000) } : {}) }
      : undefined;

  return class PostgresAdapter {
    readonly name: string;
    constructor(name: string) {
      this.name = name;
    }
    async upsert(id: string, payload: Payload, expiresIn?: number): Promise<void> {
      await store.upsert(db, this.name, id, payload, expiresIn);
    }
    async find(id: string): Promise<Payload | undefined> {
      if (this.name === 'Client') return clientMetadata(id);
      return answer(await store.find(db, this.name, id));
    }
    async findByUid(uid: string): Promise<Payload | undefined> {
      return answer(await store.findBy(db, this.name, 'uid', uid));
    }
    async findByUserCode(userCode: string): Promise<Payload | undefined> {
      return answer(await store.findBy(db, this.name, 'user_code', userCode));
    }
    async consume(id: string): Promise<void> {
      await store.consume(db, this.name, id);
    }
    async destroy(id: string): Promise<void> {
      await store.destroy(db, this.name, id);
    }
    async revokeByGrantId(grantId: string): Promise<void> {
      await store.revokeByGrantId(db, grantId);
    }
  };
}
