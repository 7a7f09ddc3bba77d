import { pbkdf2Sync, randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { hash as argon2Hash, Algorithm } from '@node-rs/argon2';
import { hashSync as bcryptHash } from '@node-rs/bcrypt';
import { REPO_ROOT } from './lib.ts';
import { PASSWORD } from './migration-config.ts';

// ---------------------------------------------------------------------------------------------------------------
// Imported hashes

interface Vector {
  name: string;
  type: string;
  password: string;
  passwordHash: string;
  passwordHashConfig?: string;
}
const VECTORS = (
  JSON.parse(readFileSync(join(REPO_ROOT, 'test', 'fixtures', 'hash-vectors.json'), 'utf8')) as { vectors: Vector[] }
).vectors;
export const vector = (name: string) => {
  const v = VECTORS.find((x) => x.name === name);
  if (!v) throw new Error(`no hash vector named ${name}`);
  return v;
};

/**
 * One imported hash per type, at the cost the source systems use by default (bcrypt 10, scrypt N=2^14, Firebase's
 * memCost 14 / rounds 8, pbkdf2-sha256 600,000 iterations (OWASP 2023), argon2id RFC 9106's second recommendation
 * t=3 m=64 MiB p=4, salted sha256/sha1). Made once per run; scrypt, firebase-scrypt and sha come from the committed
 * vectors (made by independent tools).
 */
export async function signinHashes(): Promise<
  { type: string; params: string; passwordHash: string; passwordHashConfig?: string }[]
> {
  const salt = randomBytes(16).toString('hex');
  const key = pbkdf2Sync(PASSWORD, Buffer.from(salt, 'hex'), 600_000, 32, 'sha256').toString('hex');
  const scrypt = vector('scrypt N=16384 r=8 p=1 keyLen=64');
  const firebase = vector('firebase-scrypt memCost=14 rounds=8');
  const sha256 = vector('sha256 salted prefix hex');
  const sha1 = vector('sha1 salted prefix hex');
  return [
    { type: 'bcrypt', params: '$2b$, cost 10', passwordHash: bcryptHash(PASSWORD, 10) },
    {
      type: 'scrypt',
      params: 'N=16384 r=8 p=1 keyLen=64',
      passwordHash: scrypt.passwordHash,
      passwordHashConfig: scrypt.passwordHashConfig,
    },
    {
      type: 'firebase-scrypt',
      params: 'memCost=14 rounds=8',
      passwordHash: firebase.passwordHash,
      passwordHashConfig: firebase.passwordHashConfig,
    },
    {
      type: 'pbkdf2',
      params: 'sha256, 600,000 iterations, keyLen 32',
      passwordHash: `${salt}$${key}`,
      passwordHashConfig: JSON.stringify({ saltSeparator: '$', iterations: 600_000, keyLen: 32, digest: 'sha256' }),
    },
    {
      type: 'argon2',
      params: 'argon2id m=65536 t=3 p=4',
      passwordHash: await argon2Hash(PASSWORD, {
        algorithm: Algorithm.Argon2id,
        memoryCost: 65536,
        timeCost: 3,
        parallelism: 4,
      }),
    },
    {
      type: 'sha256',
      params: 'salted (prefix), hex',
      passwordHash: sha256.passwordHash,
      passwordHashConfig: sha256.passwordHashConfig,
    },
    {
      type: 'sha1',
      params: 'salted (prefix), hex',
      passwordHash: sha1.passwordHash,
      passwordHashConfig: sha1.passwordHashConfig,
    },
  ];
}
