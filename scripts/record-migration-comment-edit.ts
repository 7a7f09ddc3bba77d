/**
 * npx tsx scripts/record-migration-comment-edit.ts <NNNN> [...]
 *
 * Records in migrations/comment-edits.json that the working-tree file of each migration differs from the committed one
 * (HEAD) only in comments, so databases that applied the old file accept the new one. Refuses a change to statements.
 */
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadCommentEdits, MIGRATIONS_DIR } from '../src/storage/migrate.ts';
import { fileChecksum, statementChecksum } from '../src/storage/migration-text.ts';

const edits = loadCommentEdits();
for (const version of process.argv.slice(2)) {
  const file = readdirSync(MIGRATIONS_DIR).find((f) => f.startsWith(`${version}_`) && f.endsWith('.sql'));
  if (!file) throw new Error(`no migration ${version}`);
  const before = execFileSync('git', ['show', `HEAD:migrations/${file}`], { encoding: 'utf8' });
  const after = readFileSync(join(MIGRATIONS_DIR, file), 'utf8');
  if (statementChecksum(before) !== statementChecksum(after))
    throw new Error(`${file}: statements changed; add a new migration`);
  // Databases may hold the checksum of any earlier text of the file: keep them all.
  const replaces = [...new Set([...(edits[version]?.replaces ?? []), fileChecksum(before)])];
  edits[version] = { replaces, statements: statementChecksum(after) };
  console.log(`${file}: recorded`);
}
writeFileSync(join(MIGRATIONS_DIR, 'comment-edits.json'), `${JSON.stringify(edits, null, 2)}\n`);
