import { AsyncResource } from 'node:async_hooks';
import { createPrivateKey, sign as cryptoSign, type KeyObject } from 'node:crypto';
import {
  exportJWK,
  exportPKCS8,
  exportSPKI,
  generateKeyPair,
  importJWK,
  jwtVerify,
  type JWK,
  type JWTPayload,
} from 'jose';
import { decrypt, encrypt, newId } from '../../lib/crypto.ts';
import { AppError } from '../../http/errors.ts';
import type { Db } from '../../storage/db.ts';
import type { Invalidation } from '../../storage/invalidation.ts';
import * as store from './store.ts';

export type Algorithm = 'RS256' | 'ES256' | 'EdDSA';
const ALGORITHMS: Algorithm[] = ['RS256', 'ES256', 'EdDSA'];

export interface KeysDeps {
  db: Db;
  kek: Buffer;
  algorithm: Algorithm;
  issuer: string;
  /** How long a retired key keeps verifying: the longest lifetime of a token it may have signed. */
  graceSeconds: number;
  /** Tells the other instances of a rotation, and reloads when one of them rotated (src/storage/invalidation.ts). */
  invalidation?: Invalidation;
}

/** Invalidation topic of the signing keys: any key added, retired or removed. */
export const KEYS_TOPIC = 'keys';

interface LoadedKey {
  kid: string;
  alg: Algorithm;
  status: 'active' | 'retired';
  publicKey: CryptoKey | Uint8Array;
  publicJwk: JWK;
  publicPem: string;
  /** The active key's signer (private key imported once, protected header encoded once). */
  signer?: Signer;
  /** The active key's private key (the OpenID provider signs its tokens with it, under the same kid). */
  privateKey?: KeyObject;
  privateJwk?: JWK;
  createdAt: Date;
  verifyUntil: Date | null;
}

export type KeysService = ReturnType<typeof createKeysService>;

/**
 * A compact JWS signer for one key, on node:crypto: the private key is a KeyObject imported once and the protected
 * header `{"alg","kid","typ":"JWT"}` is encoded once. The signature runs on libuv's thread pool (crypto.sign with a
 * callback), as WebCrypto's did, without jose's per-token work (claims builder, structured clone, header checks).
 * The bytes are those jose's SignJWT produced for the same claims and times: header fields in the order alg, kid, typ;
 * the claims in their order, then iss, iat, exp; RS256 PKCS#1 v1.5 and EdDSA signatures are deterministic, ES256 is
 * in the JOSE (IEEE P1363, r||s) form.
 */
interface Signer {
  sign(payload: string): Promise<string>;
}

const HASH: Record<Algorithm, string | null> = { RS256: 'sha256', ES256: 'sha256', EdDSA: null };

export function createSigner(alg: Algorithm, kid: string, pkcs8Pem: string): Signer {
  const key: KeyObject = createPrivateKey(pkcs8Pem);
  const keyInput = alg === 'ES256' ? { key, dsaEncoding: 'ieee-p1363' as const } : key;
  const prefix = `${Buffer.from(JSON.stringify({ alg, kid, typ: 'JWT' })).toString('base64url')}.`;
  const hash = HASH[alg];
  return {
    sign(payload: string): Promise<string> {
      const input = prefix + Buffer.from(payload).toString('base64url');
      return new Promise((resolve, reject) => {
        cryptoSign(hash, Buffer.from(input), keyInput, (err, signature) =>
          err ? reject(err) : resolve(`${input}.${signature.toString('base64url')}`),
        );
      });
    },
  };
}

/**
 * Signing keys: one active key signs; retired keys verify until their grace period ends. Keys are cached in memory
 * (the private key imported once per load) and reloaded in the background when another instance notifies a rotation,
 * when a token names an unknown kid (a rotation whose notification was missed) or once they are older than `reloadMs`. Unknown kids reload at most once per `unknownKidReloadMs`
 * (one reload at a time, the others wait for it): within that window a forged kid is refused without a key read.
 */
export function createKeysService(deps: KeysDeps, reloadMs = 60_000, unknownKidReloadMs = 5_000) {
  let cache: Map<string, LoadedKey> = new Map();
  let active: LoadedKey | undefined;
  let loadedAt = 0;
  let reloading: Promise<void> | undefined;
  let unknownKidReload: Promise<void> | undefined;
  let unknownKidReloadAt = -Infinity;
  let reloads = 0;
  // Runs a function in the async context this service was built in (outside any transaction). Tokens are signed
  // inside the sign-in and refresh transactions: a reload from there must not query the top-level Db in the
  // caller's transaction context (on PGlite, one session, that would wait for the transaction itself).
  const detached = AsyncResource.bind((fn: () => Promise<void>) => fn());

  async function load(): Promise<void> {
    reloads++;
    const rows = await store.listUsableKeys(deps.db);
    const next = new Map<string, LoadedKey>();
    let nextActive: LoadedKey | undefined;
    for (const r of rows) {
      const alg = r.alg as Algorithm;
      const k: LoadedKey = {
        kid: r.kid,
        alg,
        status: r.status,
        publicJwk: r.public_jwk as JWK,
        publicPem: r.public_pem,
        publicKey: await importJWK(r.public_jwk as JWK, alg),
        createdAt: r.created_at,
        verifyUntil: r.verify_until,
      };
      if (r.status === 'active') {
        let pem: string;
        try {
          pem = decrypt(deps.kek, r.private_key_enc);
        } catch {
          throw new Error(
            `cannot decrypt signing key ${r.kid}: the key-encryption key (GATEHOUSE_ENCRYPTION_KEY, or DATA_DIR/encryption.key) ` +
              'is not the one that sealed it. Restore that key; every instance sharing a database must use the same one.',
          );
        }
        k.signer = createSigner(alg, r.kid, pem);
        k.privateKey = createPrivateKey(pem);
        nextActive = k;
      }
      next.set(k.kid, k);
    }
    cache = next;
    active = nextActive;
    loadedAt = Date.now();
  }

  // A notified rotation reloads in the background; one arriving during that reload runs one more after it, since the
  // running one may have read the keys before the rotation committed.
  let notifiedReload: Promise<void> | undefined;
  let notifiedAgain = false;
  function reloadNotified(): void {
    if (notifiedReload) {
      notifiedAgain = true;
      return;
    }
    notifiedReload = detached(() => load())
      .catch(() => {
        /* keep the cached keys; the unknown-kid and periodic reloads still apply */
      })
      .finally(() => {
        notifiedReload = undefined;
        if (notifiedAgain) {
          notifiedAgain = false;
          reloadNotified();
        }
      });
  }
  deps.invalidation?.subscribe(KEYS_TOPIC, reloadNotified);

  /** A reload for a kid not in the cache: joins the one running, else runs one unless one ran within the window. */
  async function reloadForUnknownKid(): Promise<void> {
    if (unknownKidReload) return unknownKidReload;
    if (Date.now() - unknownKidReloadAt < unknownKidReloadMs) return;
    unknownKidReloadAt = Date.now();
    unknownKidReload = detached(() => load()).finally(() => {
      unknownKidReload = undefined;
    });
    return unknownKidReload;
  }

  async function rotate(algorithm: Algorithm = deps.algorithm): Promise<{ kid: string }> {
    const { publicKey, privateKey } = await generateKeyPair(algorithm, {
      extractable: true,
      ...(algorithm === 'EdDSA' ? { crv: 'Ed25519' } : {}),
    });
    const kid = newId();
    const jwk = { ...(await exportJWK(publicKey)), kid, alg: algorithm, use: 'sig' };
    await store.replaceActiveKey(
      deps.db,
      {
        kid,
        alg: algorithm,
        public_jwk: jwk,
        public_pem: await exportSPKI(publicKey),
        private_key_enc: encrypt(deps.kek, await exportPKCS8(privateKey)),
      },
      deps.graceSeconds,
    );
    await load();
    await deps.invalidation?.publish(deps.db, KEYS_TOPIC);
    return { kid };
  }

  /**
   * The active key. Keys older than `reloadMs` keep serving while a reload runs in the background (one at a time): a
   * key another instance has just retired still verifies for `graceSeconds`, so signing with it a moment longer is
   * safe, and no caller waits for, or runs, a key query inside its own transaction.
   */
  async function current(): Promise<LoadedKey> {
    if (!active) await load();
    else if (Date.now() - loadedAt > reloadMs && !reloading) {
      reloading = detached(() => load())
        .catch(() => {
          /* keep the cached keys; the next call past reloadMs tries again */
        })
        .finally(() => {
          reloading = undefined;
        });
    }
    if (!active) throw new Error('no active signing key; call init() first');
    return active;
  }

  return {
    /** Loads keys; creates the first key, or rotates when the configured algorithm changed. */
    async init(): Promise<void> {
      await load();
      if (!active || active.alg !== deps.algorithm) await rotate(deps.algorithm);
    },
    rotate,
    /** Key loads so far (start, rotation, background and unknown-kid reloads): tests read it to bound the reads. */
    get reloads(): number {
      return reloads;
    },

    /** A JWT of `claims` plus iss, iat (now) and exp (now + ttlSeconds), signed by the active key. */
    async sign(claims: JWTPayload & Record<string, unknown>, ttlSeconds: number): Promise<string> {
      const key = await current();
      const now = Math.floor(Date.now() / 1000);
      return key.signer!.sign(JSON.stringify({ ...claims, iss: deps.issuer, iat: now, exp: now + ttlSeconds }));
    },

    /** Verifies signature, issuer and expiry; throws AppError INVALID_TOKEN on any failure. */
    async verify(token: string): Promise<JWTPayload & Record<string, unknown>> {
      try {
        const { payload } = await jwtVerify(
          token,
          async (header) => {
            let key = header.kid ? cache.get(header.kid) : undefined;
            if (!key && header.kid) {
              await reloadForUnknownKid();
              key = cache.get(header.kid);
            }
            if (!key || key.alg !== header.alg) throw new Error('unknown signing key');
            if (key.verifyUntil && key.status === 'retired' && key.verifyUntil.getTime() < Date.now())
              throw new Error('signing key expired');
            return key.publicKey;
          },
          { issuer: deps.issuer, algorithms: ALGORITHMS },
        );
        return payload as JWTPayload & Record<string, unknown>;
      } catch {
        throw new AppError('INVALID_TOKEN');
      }
    },

    async jwks(): Promise<{ keys: JWK[] }> {
      await current();
      return {
        keys: [...cache.values()]
          .filter((k) => k.status === 'active' || (k.verifyUntil && k.verifyUntil > new Date()))
          .map((k) => k.publicJwk),
      };
    },

    /**
     * The active key as a private JWK (kid, alg, use): the OpenID provider's signing key, so its ID and access tokens
     * verify against /.well-known/jwks.json. Never answered by a route.
     */
    async activePrivateJwk(): Promise<JWK> {
      const key = await current();
      key.privateJwk ??= {
        ...(key.privateKey!.export({ format: 'jwk' }) as JWK),
        kid: key.kid,
        alg: key.alg,
        use: 'sig',
      };
      return key.privateJwk;
    },

    async algorithm(): Promise<Algorithm> {
      return (await current()).alg;
    },

    async publicPem(): Promise<string> {
      return (await current()).publicPem;
    },

    async list() {
      const rows = await store.listAllKeys(deps.db);
      return rows.map((r) => ({
        kid: r.kid,
        alg: r.alg,
        status: r.status,
        createdAt: r.created_at.toISOString(),
        retiredAt: r.retired_at?.toISOString() ?? null,
        verifyUntil: r.verify_until?.toISOString() ?? null,
      }));
    },
  };
}
