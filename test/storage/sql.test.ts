import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { ClosableDb } from '../../src/storage/db.ts';
import { sql } from '../../src/storage/sql.ts';
import { openTestDb } from '../helpers/db.ts';

/**
 * The SQL builder: fragments owned by different modules composed into one statement, parameters numbered by the
 * builder (never by hand), and the values bound where the text says, on the store the suite runs on.
 */
describe('storage: the SQL builder', () => {
  let db: ClosableDb;
  before(async () => {
    db = await openTestDb();
  });
  after(async () => db?.close());

  test('values become $n in order; embedded fragments are inlined and renumbered', () => {
    const inner = sql`b = ${'B'} AND c = ${3}`;
    const outer = sql`SELECT 1 WHERE a = ${'A'} AND ${inner} AND d = ${null}`;
    assert.deepEqual(outer.build(), {
      text: 'SELECT 1 WHERE a = $1 AND b = $2 AND c = $3 AND d = $4',
      values: ['A', 'B', 3, null],
    });
    // The same fragment on its own, and numbered from another first parameter (a caller that counts its own).
    assert.deepEqual(inner.build(), { text: 'b = $1 AND c = $2', values: ['B', 3] });
    assert.deepEqual(inner.build(7), { text: 'b = $7 AND c = $8', values: ['B', 3] });
  });

  test('a shared param takes one number wherever it is embedded; plain values each take their own', () => {
    const user = sql.param('u-1');
    const first = sql`x AS (UPDATE t SET n = ${1} WHERE id = ${user})`;
    const second = sql`y AS (INSERT INTO s (user_id, n) VALUES (${user}, ${1}))`;
    const whole = sql`WITH ${sql.join([first, second], ', ')} SELECT ${user}`;
    assert.deepEqual(whole.build(), {
      text:
        'WITH x AS (UPDATE t SET n = $1 WHERE id = $2), ' +
        'y AS (INSERT INTO s (user_id, n) VALUES ($2, $3)) SELECT $2',
      values: [1, 'u-1', 1],
    });
  });

  test('join of nothing is empty; raw text carries no values; fill puts fragments at named placeholders', () => {
    assert.deepEqual(sql`SELECT 1${sql.join([], ', ')}`.build(), { text: 'SELECT 1', values: [] });
    assert.deepEqual(sql`SELECT ${sql.raw('now()')}`.build(), { text: 'SELECT now()', values: [] });
    const rows = sql`VALUES (${sql.list(['a', 2, null])}), (${sql.list([])})`;
    assert.deepEqual(rows.build(), { text: 'VALUES ($1, $2, $3), ()', values: ['a', 2, null] });
    const tenant = sql.param('t-1');
    const text = "SELECT id FROM r WHERE tenant = {tenant} AND other = {tenant} AND keep = '{unknown}'";
    const filled = sql.fill(text, { tenant: sql`${tenant}::text` });
    assert.deepEqual(filled.build(), {
      text: "SELECT id FROM r WHERE tenant = $1::text AND other = $1::text AND keep = '{unknown}'",
      values: ['t-1'],
    });
  });

  test('a composed statement runs with its values bound where the text says (text, arrays, json, null)', async () => {
    const tags = sql`${['a', 'b']}::text[]`;
    const doc = sql`${JSON.stringify({ k: 1 })}::jsonb`;
    const same = sql.param(5);
    const q = sql`SELECT ${'x'}::text AS t, ${tags} AS tags, ${doc} AS doc, ${null}::int AS nothing,
                         ${same}::int + ${same}::int AS ten`.build();
    const { rows } = await db.query(q.text, q.values);
    assert.deepEqual(rows, [{ t: 'x', tags: ['a', 'b'], doc: { k: 1 }, nothing: null, ten: 10 }]);
  });
});
