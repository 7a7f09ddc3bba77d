import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { newId, randomSecret, safeEqual, sha256Hex } from '../../lib/crypto.ts';
import { AppError } from '../../http/errors.ts';
import type { VendorAuth } from '../../http/auth.ts';
import type { Db, Queryable } from '../../storage/db.ts';
import type { Invalidation } from '../../storage/invalidation.ts';
import type { KeysService } from '../keys/index.ts';
import {
  DEFAULT_SETTINGS,
  type CreateCredentialBody,
  type UpdateVendorSettings,
  type VendorSettings,
} from './schema.ts';
import * as store from './store.ts';
import { createReadCache } from '../../storage/read-cache.ts';
import { createLoginBox, type LoginBoxFlows } from './login-box.ts';
import { createBranding } from './branding.ts';

export interface EnvironmentDeps {
  db: Db;
  keys: KeysService;
  vendorTokenTtl: number;
  /**
   * Whether messages with no provider configured go to the development outbox (config.messaging.devOutbox): the
   * public login-box configuration then counts email and SMS as deliverable. Unset: only configured providers count.
   */
  devOutbox?: boolean;
  /** The sign-in and reset facts of the public login-box configuration. */
  loginBox: LoginBoxFlows;
  /** Tells the other instances of a revoked credential or changed settings (src/storage/invalidation.ts). */
  invalidation?: Invalidation;
}

/** Invalidation topics: a credential's state (key: its id), and the settings document (settings and branding). */
export const CREDENTIAL_TOPIC = 'environment.credential';
export const SETTINGS_TOPIC = 'environment.settings';

/** How long another instance's change of the environment settings may take to reach this one's sign-ins. */
export const SETTINGS_CACHE_MS = 5000;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

const toCredential = (r: store.CredentialRow) => ({
  id: r.id,
  clientId: r.client_id,
  description: r.description,
  scopes: r.scopes,
  createdAt: r.created_at.toISOString(),
  lastUsedAt: r.last_used_at?.toISOString() ?? null,
  revokedAt: r.revoked_at?.toISOString() ?? null,
});

export type EnvironmentService = ReturnType<typeof createEnvironmentService>;

/** The environment (vendor): its id, its settings, its API credentials and the vendor-token exchange. */
export function createEnvironmentService(deps: EnvironmentDeps) {
  const { db } = deps;
  let environmentId = '';
  // Revocation reaches tokens already issued: a credential's state is re-read at most every 5 s per process, and at
  // once when a notification of its revocation arrives.
  const activeCache = new Map<string, { active: boolean; at: number }>();
  const DECOY_HASH = sha256Hex(randomSecret());
  const settingsCache = createReadCache<VendorSettings>({ ttlMs: SETTINGS_CACHE_MS });
  const branding = createBranding(db, deps.invalidation);
  deps.invalidation?.subscribe(CREDENTIAL_TOPIC, (id) =>
    id === undefined ? activeCache.clear() : activeCache.delete(id),
  );
  deps.invalidation?.subscribe(SETTINGS_TOPIC, () => settingsCache.invalidate());
  const readMerged = async (q: Queryable = db): Promise<VendorSettings> => ({
    ...DEFAULT_SETTINGS,
    ...((await store.readSettings(q)) as Partial<VendorSettings>),
  });

  return {
    get id() {
      return environmentId;
    },
    /** Current settings, re-read so that a change made through another instance is seen. */
    async settings(q: Queryable = db): Promise<VendorSettings> {
      return readMerged(q);
    },

    /** The look of the hosted pages (branding.ts). */
    branding,

    /** The public view of the sign-in configuration for login boxes, and the vendor's basic configuration. */
    loginBox: createLoginBox({
      ...deps.loginBox,
      db,
      devOutbox: deps.devOutbox ?? false,
      settings: () => readMerged(),
    }),

    /**
     * The settings for the sign-in and refresh hot path (token and refresh lifetimes, cookie): cached in process,
     * dropped when this process changes them or another instance notifies a change (SETTINGS_TOPIC), re-read at most
     * every SETTINGS_CACHE_MS otherwise (while the notification listener is down).
     */
    async cachedSettings(q: Queryable = db): Promise<VendorSettings> {
      return {
        ...(await settingsCache.get('', async () => ({
          ...DEFAULT_SETTINGS,
          ...((await store.readSettings(q)) as Partial<VendorSettings>),
        }))),
      };
    },

    /**
     * Creates the environment row on first start and makes sure a credential exists: the operator's
     * (GATEHOUSE_CLIENT_ID/GATEHOUSE_API_KEY) or, when unset and none was ever made, a generated pair returned so
     * the caller prints it once. The secret is only ever stored hashed.
     */
    async bootstrap(operator?: {
      clientId: string;
      apiKey: string;
    }): Promise<{ generated?: { clientId: string; secret: string } }> {
      const env = await store.ensureEnvironment(db, newId());
      environmentId = env.id;
      if (operator) {
        const hash = sha256Hex(operator.apiKey);
        const existing = await store.findCredentialByClientId(db, operator.clientId);
        if (!existing) {
          await store.insertCredential(db, {
            id: newId(),
            clientId: operator.clientId,
            secretHash: hash,
            description: 'operator (GATEHOUSE_CLIENT_ID)',
            scopes: [],
            bootstrap: true,
          });
        } else if (existing.secret_hash !== hash) {
          await store.replaceSecret(db, existing.id, hash);
          await deps.invalidation?.publish(db, CREDENTIAL_TOPIC, existing.id);
        }
        return {};
      }
      if (await store.hasBootstrapCredential(db)) return {};
      const clientId = newId();
      const secret = randomSecret(32);
      await store.insertCredential(db, {
        id: newId(),
        clientId,
        secretHash: sha256Hex(secret),
        description: 'generated on first start',
        scopes: [],
        bootstrap: true,
      });
      return { generated: { clientId, secret } };
    },

    /**
     * A read-only credential (`entitlements:read`) for an agent on this machine when none is configured: kept while
     * the file's pair still signs in, else made anew; the file (mode 0600) sits beside the key-encryption key.
     */
    async ensureLocalAgentCredential(file: string): Promise<void> {
      try {
        const c = JSON.parse(readFileSync(file, 'utf8')) as { clientId: string; secret: string };
        const cred = await store.findCredentialByClientId(db, c.clientId);
        if (cred && !cred.revoked_at && safeEqual(sha256Hex(c.secret), cred.secret_hash)) return;
      } catch {
        /* absent or unreadable: make one */
      }
      const created = await this.createCredential({
        description: 'entitlements agent (local)',
        scopes: ['entitlements:read'],
      });
      mkdirSync(dirname(file), { recursive: true });
      const tmp = `${file}.${process.pid}.tmp`;
      writeFileSync(tmp, JSON.stringify({ clientId: created.clientId, secret: created.secret }), { mode: 0o600 });
      renameSync(tmp, file);
    },

    /** POST /auth/vendor: a client id and secret become a vendor token. Unknown id and wrong secret look the same. */
    async exchange(clientId: string, secret: string): Promise<{ token: string; expiresIn: number }> {
      const cred = await store.findCredentialByClientId(db, clientId);
      const matches = safeEqual(sha256Hex(secret), cred?.secret_hash ?? DECOY_HASH);
      if (!cred || !matches || cred.revoked_at) throw new AppError('BAD_CREDENTIALS');
      void store.touchCredential(db, cred.id).catch(() => {});
      const token = await deps.keys.sign(
        { type: 'vendor', sub: cred.client_id, cid: cred.id, scopes: cred.scopes, aud: environmentId },
        deps.vendorTokenTtl,
      );
      return { token, expiresIn: deps.vendorTokenTtl };
    },

    /** Verifies a vendor token's claims (signature already checked) and that its credential is not revoked. */
    async vendorContext(claims: Record<string, unknown>): Promise<VendorAuth> {
      const cid = String(claims.cid ?? '');
      const cached = activeCache.get(cid);
      let active = cached && Date.now() - cached.at < 5000 ? cached.active : undefined;
      if (active === undefined) {
        const cred = UUID.test(cid) ? await store.findCredential(db, cid) : undefined;
        active = Boolean(cred && !cred.revoked_at);
        activeCache.set(cid, { active, at: Date.now() });
      }
      if (!active) throw new AppError('INVALID_TOKEN', 'The credential behind this token was revoked');
      return {
        kind: 'vendor',
        credentialId: cid,
        clientId: String(claims.sub),
        scopes: Array.isArray(claims.scopes) ? (claims.scopes as string[]) : [],
      };
    },

    async createCredential(body: CreateCredentialBody) {
      const secret = randomSecret(32);
      const row = await store.insertCredential(db, {
        id: newId(),
        clientId: newId(),
        secretHash: sha256Hex(secret),
        description: body.description ?? '',
        scopes: body.scopes ?? [],
        bootstrap: false,
      });
      return { ...toCredential(row), secret };
    },

    listCredentials: async () => (await store.listCredentials(db)).map(toCredential),

    async revokeCredential(id: string): Promise<void> {
      const cred = await store.findCredential(db, id);
      if (!cred || cred.revoked_at) throw new AppError('CREDENTIAL_NOT_FOUND', `No active credential with id ${id}`);
      await store.revokeCredential(db, id);
      activeCache.set(id, { active: false, at: Date.now() });
      await deps.invalidation?.publish(db, CREDENTIAL_TOPIC, id);
    },

    async config() {
      return {
        id: environmentId,
        publicKey: await deps.keys.publicPem(),
        algorithm: await deps.keys.algorithm(),
        ...(await this.settings()),
      };
    },

    async updateSettings(patch: UpdateVendorSettings) {
      try {
        await store.mergeSettings(db, patch);
      } finally {
        settingsCache.invalidate();
      }
      await deps.invalidation?.publish(db, SETTINGS_TOPIC);
      return this.config();
    },
  };
}
