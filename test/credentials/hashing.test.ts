import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { hash as rawArgon2 } from '@node-rs/argon2';
import {
  ARGON2_PARAMETERS,
  argon2NeedsRehash,
  commonPasswords,
  createPasswordService,
  hasherFor,
  HASHERS,
} from '../../src/modules/credentials/index.ts';
import { passwordHashOf } from '../../src/modules/users/index.ts';
import type { Db } from '../../src/storage/db.ts';

// Hashing never touches the database; a Db that fails loudly proves it.
const noDb: Db = {
  query: () => Promise.reject(new Error('hashing must not query the database')),
  transaction: () => Promise.reject(new Error('hashing must not open a transaction')),
};
const passwords = createPasswordService({ db: noDb, passwordHashOf });

describe('credentials: hashing', () => {
  test('hash answers an argon2id PHC string with the OWASP parameters; verify round-trips', async () => {
    const stored = await passwords.hash('correct horse battery staple');
    assert.match(stored, /^\$argon2id\$v=19\$m=19456,t=2,p=1\$[A-Za-z0-9+/]{22}\$[A-Za-z0-9+/]{43}$/);
    assert.deepEqual(ARGON2_PARAMETERS, { memoryCost: 19456, timeCost: 2, parallelism: 1, outputLen: 32 });
    assert.deepEqual(await passwords.verify('correct horse battery staple', stored), { ok: true, needsRehash: false });
    assert.notEqual(await passwords.hash('correct horse battery staple'), stored, 'a fresh salt each time');
  });

  test('with hashConcurrency 1, concurrent verifies, decoys and hashes queue and each answers its own result', async () => {
    const one = createPasswordService({ db: noDb, hashConcurrency: 1, passwordHashOf });
    const stored = await one.hash('queue-Passw0rd');
    const answers = await Promise.all([
      one.verify('queue-Passw0rd', stored),
      one.verify('wrong-Passw0rd', stored),
      one.verify('queue-Passw0rd', null),
      one.decoy('anything'),
      one.hash('another-Passw0rd'),
      one.verify('queue-Passw0rd', stored),
    ]);
    assert.deepEqual(answers.slice(0, 4), [
      { ok: true, needsRehash: false },
      { ok: false, needsRehash: false },
      { ok: false, needsRehash: false },
      undefined,
    ]);
    assert.match(answers[4] as string, /^\$argon2id\$/);
    assert.deepEqual(answers[5], { ok: true, needsRehash: false });
  });

  test('a wrong password is ok:false (and never needsRehash)', async () => {
    const stored = await passwords.hash('s3cret-Passw0rd');
    assert.deepEqual(await passwords.verify('s3cret-passw0rd', stored), { ok: false, needsRehash: false });
    assert.deepEqual(await passwords.verify('', stored), { ok: false, needsRehash: false });
  });

  test('weaker argon2id parameters, argon2i and argon2d verify but need a rehash', async () => {
    const weaker = await rawArgon2('legacy-pass', { algorithm: 2, memoryCost: 4096, timeCost: 1, parallelism: 1 });
    assert.match(weaker, /^\$argon2id\$v=19\$m=4096,t=1,p=1\$/);
    assert.deepEqual(await passwords.verify('legacy-pass', weaker), { ok: true, needsRehash: true });
    assert.deepEqual(await passwords.verify('other', weaker), { ok: false, needsRehash: false });
    for (const algorithm of [0, 1] as const) {
      const stored = await rawArgon2('legacy-pass', { algorithm, memoryCost: 19456, timeCost: 2, parallelism: 1 });
      assert.deepEqual(
        await passwords.verify('legacy-pass', stored),
        { ok: true, needsRehash: true },
        stored.slice(0, 10),
      );
    }
    const longer = await rawArgon2('legacy-pass', {
      algorithm: 2,
      memoryCost: 19456,
      timeCost: 2,
      parallelism: 1,
      outputLen: 64,
    });
    assert.equal(argon2NeedsRehash(longer), true);
    assert.equal(argon2NeedsRehash(await passwords.hash('x')), false);
  });

  test('PHC parameters in another order still verify (imported hashes)', async () => {
    const stored = await passwords.hash('order-free');
    const reordered = stored.replace('m=19456,t=2,p=1', 't=2,p=1,m=19456');
    assert.notEqual(reordered, stored);
    assert.equal((await passwords.verify('order-free', reordered)).ok, true);
  });

  test('null, unknown formats and malformed argon2 strings are ok:false, not errors', async () => {
    for (const stored of [
      null,
      '',
      'plaintext',
      '$2b$10$abcdefghijklmnopqrstuv',
      '$argon2id$v=19$m=19456,t=2,p=1$bad',
      '$argon2id$garbage',
    ]) {
      assert.deepEqual(await passwords.verify('anything', stored), { ok: false, needsRehash: false }, String(stored));
    }
    assert.equal(hasherFor('$argon2i$v=19$m=1,t=1,p=1$x$y')?.id, 'argon2');
    assert.equal(hasherFor('$2b$10$x')?.id, 'bcrypt', 'recognised, yet malformed: verifies nothing');
    assert.deepEqual(
      HASHERS.map((h) => h.id),
      ['argon2', 'bcrypt', 'scrypt', 'firebase-scrypt', 'pbkdf2', 'sha256', 'sha1'],
    );
  });

  test('the common-password list: 10,000 entries from the package, loaded once', async () => {
    const a = await commonPasswords();
    const b = await commonPasswords();
    assert.equal(a, b);
    assert.equal(a.size, 10_000);
    for (const p of ['123456', 'password', 'qwerty', 'password123', 'trustno1']) assert.ok(a.has(p), p);
    assert.ok(!a.has('correct horse battery staple'));
  });
});
