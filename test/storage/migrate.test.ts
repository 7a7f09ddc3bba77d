import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ClosableDb } from '../../src/storage/db.ts';
import { loadMigrations, migrate } from '../../src/storage/migrate.ts';
import { fileChecksum, statementChecksum } from '../../src/storage/migration-text.ts';
import { openTestDb } from '../helpers/db.ts';

/** An applied migration may have its comments edited only through a recorded edit; its statements never. */
describe('storage: applied migrations and comment-only edits', () => {
  let db: ClosableDb;
  let dir: string;
  const FILE = '9001_comment_edit.sql';
  const ORIGINAL = "-- Old header naming history.\nCREATE TABLE mig_edit_t (id int, note text DEFAULT 'a -- b');\n";
  const COMMENTED =
    "-- What the table is for.\n-- A second line.\nCREATE TABLE mig_edit_t (id int, note text DEFAULT 'a -- b'); -- why\n";
  const write = (sql: string, edits?: object) => {
    writeFileSync(join(dir, FILE), sql);
    if (edits) writeFileSync(join(dir, 'comment-edits.json'), JSON.stringify(edits));
  };
  const stored = async () =>
    (await db.query<{ checksum: string }>('SELECT checksum FROM schema_migrations WHERE version = 9001')).rows[0]
      ?.checksum;

  before(async () => {
    db = await openTestDb();
    dir = mkdtempSync(join(tmpdir(), 'gatehouse-migrations-'));
    write(ORIGINAL);
    assert.deepEqual((await migrate(db, loadMigrations(dir))).applied, ['9001_comment_edit']);
  });
  after(async () => {
    await db?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  test('an unrecorded change to an applied file, even to a comment, stops the start', async () => {
    write(COMMENTED);
    await assert.rejects(migrate(db, loadMigrations(dir)), /9001_comment_edit was changed after it was applied/);
    assert.equal(await stored(), fileChecksum(ORIGINAL));
  });

  test('a recorded comment-only edit is accepted once, and the applied row takes the new checksum', async () => {
    write(COMMENTED, { '9001': { replaces: [fileChecksum(ORIGINAL)], statements: statementChecksum(COMMENTED) } });
    assert.deepEqual((await migrate(db, loadMigrations(dir))).applied, []);
    assert.equal(await stored(), fileChecksum(COMMENTED));
    assert.deepEqual((await migrate(db, loadMigrations(dir))).applied, []);
  });

  test('a changed statement is refused even when an edit is recorded for it', async () => {
    const changed = COMMENTED.replace("'a -- b'", "'a'");
    assert.notEqual(statementChecksum(changed), statementChecksum(COMMENTED), 'text inside quotes is not a comment');
    write(changed, { '9001': { replaces: [fileChecksum(COMMENTED)], statements: statementChecksum(COMMENTED) } });
    await assert.rejects(migrate(db, loadMigrations(dir)), /changed after it was applied/);
    assert.equal(await stored(), fileChecksum(COMMENTED));
  });
});
