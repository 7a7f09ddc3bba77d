import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { readSource } from '../../scripts/lib/sources.ts';
import { EXPRESSION, lex } from '../../scripts/lib/ts-lexer.ts';

// The module boundary check (scripts/check-modules.ts) reads code with its own lexer: these pin what it must see.
const root = mkdtempSync(join(tmpdir(), 'gatehouse-check-modules-'));
after(() => rmSync(root, { recursive: true, force: true }));

function source(path: string, text: string) {
  mkdirSync(join(root, path, '..'), { recursive: true });
  writeFileSync(join(root, path), text);
  return readSource(root, path);
}

test('literals and comments are blanked in code; regular expressions with quotes do not derail the lexer', () => {
  // `#` stands for `$`: a template's expression in a plain string reads as a mistake to the linter.
  const src = ["const re = /['\"`]/g; // it's", "const s = `a #{`b #{'c'}`} d`; /* FROM users */ const t = 'x';"]
    .join('\n')
    .replaceAll('#', '$');
  const { code, literals } = lex(src);
  assert.deepEqual(
    literals.map((l) => l.text),
    ['c', `b ${EXPRESSION}`, `a ${EXPRESSION} d`, 'x'],
  );
  assert.equal(code.length, src.length);
  assert.doesNotMatch(code, /users|it's/);
});

test('imports, re-exports and dynamic imports resolve to repository paths', () => {
  source('src/modules/b/index.ts', '');
  source('src/modules/b/store.ts', '');
  const f = source(
    'src/modules/a/x.ts',
    [
      "import { one, two as three } from '../b/store.ts';",
      "import type { T } from '../b/index.ts';",
      "export * from './y.ts';",
      "const later = () => import('../b/store.ts');",
      "import 'node:fs';",
      'export { three };',
    ].join('\n'),
  );
  assert.deepEqual(
    f.imports.map((i) => [i.kind, i.target ?? i.spec, i.bindings.join(',')]),
    [
      ['import', 'src/modules/b/store.ts', 'one,three'],
      ['import', 'src/modules/b/index.ts', 'T'],
      ['export', 'src/modules/a/y.ts', ''],
      ['import', 'node:fs', ''],
      ['dynamic', 'src/modules/b/store.ts', ''],
    ],
  );
  assert.deepEqual(f.localExports, ['three']);
});

test('tables are read from SQL in literals, comma lists and table properties, not from comments or prose', () => {
  const f = source(
    'src/modules/a/sql.ts',
    [
      '// SELECT * FROM comments_only',
      "const a = 'Removes the user from users';",
      'const b = `SELECT u.id FROM users u, user_tenants ut JOIN roles r ON true WHERE x IN (SELECT 1 FROM unnest($1))`;',
      "const c = ['DELETE FROM sessions', 'INSERT INTO events(id) VALUES (1)', `UPDATE tenants SET a = 1, b = 2`];",
      "const d = { table: 'mfa_codes', where: 'expires_at < now()' };",
    ].join('\n'),
  );
  assert.deepEqual([...f.tables].sort(), [
    'events',
    'mfa_codes',
    'roles',
    'sessions',
    'tenants',
    'unnest',
    'user_tenants',
    'users',
  ]);
});

test('the repository passes the module check against its baseline', () => {
  const out = execFileSync(process.execPath, ['--import', 'tsx', 'scripts/check-modules.ts'], { encoding: 'utf8' });
  assert.match(out, /\nOK\n?$/);
});
