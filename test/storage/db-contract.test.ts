import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import type { ClosableDb } from '../../src/storage/db.ts';
import { prepared } from '../../src/storage/prepared.ts';
import { openTestDb } from '../helpers/db.ts';

/**
 * The Db contract every module relies on, on the store the suite runs on (PGlite, or PostgreSQL with
 * TEST_DATABASE_URL): values round-trip the same through prepared (named) and unprepared statements, a transaction
 * is atomic and isolated from statements sent outside it, and a failed one leaves nothing behind.
 */
const INSERT =
  'INSERT INTO contract_t (id, name, at, doc, tags, flag, n) VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING *';
const INSERT_PREPARED = prepared(`${INSERT} -- prepared`);
const BY_ID = 'SELECT id, name, at, doc, tags, flag, n FROM contract_t WHERE id = $1';
const BY_ID_PREPARED = prepared(`${BY_ID} -- prepared`);
const COUNT_PREPARED = prepared('SELECT count(*)::int AS n FROM contract_t WHERE name = $1');

describe('storage: the Db contract', () => {
  let db: ClosableDb;
  before(async () => {
    db = await openTestDb();
    await db.query(
      'CREATE TABLE contract_t (id uuid PRIMARY KEY, name text NOT NULL, at timestamptz, doc jsonb, tags text[], flag boolean, n int)',
    );
  });
  after(async () => db?.close());

  test('values round-trip alike through prepared and unprepared statements, past the point where plans are reused', async () => {
    for (let i = 0; i < 8; i++) {
      const values = (id: string) => [
        id,
        `name ${i}`,
        new Date(Date.UTC(2026, 0, 1, 0, 0, i)),
        { i, nested: { ok: true }, list: [1, 'two'] },
        ['a', `b${i}`],
        i % 2 === 0,
        i % 3 === 0 ? null : i,
      ];
      const [a, b] = [randomUUID(), randomUUID()];
      const plain = (await db.query(INSERT, values(a))).rows[0];
      const named = (await db.query(INSERT_PREPARED, values(b))).rows[0];
      assert.deepEqual({ ...named, id: a }, plain);
      assert.deepEqual((await db.query(BY_ID_PREPARED, [b])).rows, (await db.query(BY_ID, [b])).rows);
      assert.ok(plain.at instanceof Date);
      assert.equal(plain.at.toISOString(), `2026-01-01T00:00:0${i}.000Z`);
      assert.deepEqual(plain.doc, { i, nested: { ok: true }, list: [1, 'two'] });
      assert.deepEqual(plain.tags, ['a', `b${i}`]);
      assert.equal(plain.n, i % 3 === 0 ? null : i);
    }
  });

  test('a prepared statement reports the database error code', async () => {
    const id = randomUUID();
    await db.query(INSERT_PREPARED, [id, 'dup', null, null, null, null, null]);
    await assert.rejects(
      db.query(INSERT_PREPARED, [id, 'dup', null, null, null, null, null]),
      (err: { code?: string }) => err.code === '23505',
    );
    // The failed statement left the store usable.
    assert.equal((await db.query<{ n: number }>(COUNT_PREPARED, ['dup'])).rows[0].n, 1);
  });

  test('a transaction that throws leaves nothing, and statements first prepared in it still run afterwards', async () => {
    const text = prepared('INSERT INTO contract_t (id, name) VALUES ($1, $2) -- prepared in a rolled-back transaction');
    await assert.rejects(
      db.transaction(async (tx) => {
        await tx.query(text, [randomUUID(), 'rolled-back']);
        await tx.query(text, [randomUUID(), 'rolled-back']);
        throw new Error('stop');
      }),
      /stop/,
    );
    assert.equal((await db.query<{ n: number }>(COUNT_PREPARED, ['rolled-back'])).rows[0].n, 0);
    await db.query(text, [randomUUID(), 'after-rollback']);
    assert.equal((await db.query<{ n: number }>(COUNT_PREPARED, ['after-rollback'])).rows[0].n, 1);
  });

  test('a failed statement inside a transaction rolls the whole transaction back', async () => {
    const id = randomUUID();
    await assert.rejects(
      db.transaction(async (tx) => {
        await tx.query(INSERT_PREPARED, [randomUUID(), 'half', null, null, null, null, null]);
        await tx.query(INSERT_PREPARED, [id, 'half', null, null, null, null, null]);
        await tx.query(INSERT_PREPARED, [id, 'half', null, null, null, null, null]);
      }),
      (err: { code?: string }) => err.code === '23505',
    );
    assert.equal((await db.query<{ n: number }>(COUNT_PREPARED, ['half'])).rows[0].n, 0);
  });

  test('a statement sent outside an open transaction never sees half of it', async () => {
    // The outside statement is sent (from outside the transaction's async context) once the first row is written.
    let firstWritten!: () => void;
    const sent = new Promise<void>((resolve) => (firstWritten = resolve)).then(() =>
      db.query<{ n: number }>(COUNT_PREPARED, ['pair']),
    );
    await db.transaction(async (tx) => {
      await tx.query(INSERT_PREPARED, [randomUUID(), 'pair', null, null, null, null, null]);
      firstWritten();
      await new Promise((r) => setTimeout(r, 20));
      await tx.query(INSERT_PREPARED, [randomUUID(), 'pair', null, null, null, null, null]);
    });
    const seen = (await sent).rows[0].n;
    assert.ok(seen === 0 || seen === 2, `the outside statement saw ${seen} rows`);
    assert.equal((await db.query<{ n: number }>(COUNT_PREPARED, ['pair'])).rows[0].n, 2);
  });

  test('statements sent together inside a transaction, nested transactions and empty transactions', async () => {
    const answer = await db.transaction(async (tx) => {
      await Promise.all(
        [1, 2, 3].map((i) => tx.query(INSERT_PREPARED, [randomUUID(), 'together', null, null, null, null, i])),
      );
      return tx.transaction(
        async (inner) => (await inner.query<{ n: number }>(COUNT_PREPARED, ['together'])).rows[0].n,
      );
    });
    assert.equal(answer, 3);
    assert.equal(await db.transaction(async () => 'nothing sent'), 'nothing sent');
    assert.equal((await db.query<{ n: number }>(COUNT_PREPARED, ['together'])).rows[0].n, 3);
  });
});
