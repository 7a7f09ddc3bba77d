/**
 * What the module check reads from a source file: its imports and re-exports (resolved to repository paths), the
 * names an index re-exports, and the tables its SQL names.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { basename, dirname, join, relative, resolve } from 'node:path';
import { EXPRESSION, lex } from './ts-lexer.ts';

export interface ImportRef {
  /** The specifier as written. */
  spec: string;
  /** The imported file, relative to the repository root; undefined for packages and node: builtins. */
  target?: string;
  kind: 'import' | 'export' | 'dynamic';
  /** Local names an `import` binds (empty for `export … from` and dynamic imports). */
  bindings: string[];
}

export interface SourceFile {
  path: string;
  imports: ImportRef[];
  /** Names listed in `export { … }` without `from` (re-exports of imported bindings among them). */
  localExports: string[];
  /**
   * Tables named after FROM, JOIN, INTO, UPDATE, USING, TRUNCATE or TABLE inside string and template literals, and
   * in a `table: '…'` property (SQL built around a table name, as in the housekeeping purge rules).
   */
  tables: Set<string>;
}

/** The .ts files under dir, repository-relative, sorted. */
export function listTs(root: string, dir: string): string[] {
  const out: string[] = [];
  const walk = (d: string) => {
    for (const name of readdirSync(d).sort()) {
      const p = join(d, name);
      if (statSync(p).isDirectory()) walk(p);
      else if (name.endsWith('.ts')) out.push(relative(root, p));
    }
  };
  walk(join(root, dir));
  return out;
}

/** store.ts, x.store.ts and x-store.ts hold a module's SQL. */
export const isStore = (path: string) => /(^|[.-])store\.ts$/.test(basename(path));

// The clause between import/export and `from` holds only names, braces, commas, `*`, `as` and `type`.
const FROM_CLAUSE = /\b(import|export)\s+([\w$*\s,{}]*?)\s*\bfrom\s*(['"])/g;
const BARE_IMPORT = /\bimport\s*(['"])/g;
const DYNAMIC_IMPORT = /\bimport\s*\(\s*(['"`])/g;
const LOCAL_EXPORT = /\bexport\s+(?:type\s+)?\{([^}]*)\}(?!\s*from\b)/g;
const TABLE_PROPERTY = /\btable\s*:\s*(['"])/g;
const TABLE_REF = /\b(?:FROM|JOIN|INTO|UPDATE|USING|TRUNCATE|TABLE)\s+(?:ONLY\s+)?([a-z_][a-z0-9_]*)/g;
// `FROM a x, b y`: the next table of a comma list, after an optional alias.
const NEXT_IN_LIST = /^(?:\s+(?:AS\s+)?[a-z_][a-z0-9_]*)?\s*,\s*([a-z_][a-z0-9_]*)/;

/** Local names bound by an import clause such as `a, { b, c as d, type E }` or `* as ns`. */
function bindingsOf(clause: string): string[] {
  const names: string[] = [];
  const body = clause.replace(/^type\s+/, '');
  for (const part of body.replace(/[{}]/g, ',').split(',')) {
    const words = part
      .trim()
      .split(/\s+/)
      .filter((w) => w !== 'type' && w !== '');
    if (words.length === 0) continue;
    names.push(words[words.length - 1]);
  }
  return names.filter((n) => n !== '*');
}

function resolveSpec(root: string, file: string, spec: string): string | undefined {
  if (!spec.startsWith('.')) return undefined;
  const base = resolve(root, dirname(file), spec);
  for (const candidate of [base, `${base}.ts`, join(base, 'index.ts')]) {
    if (existsSync(candidate) && statSync(candidate).isFile()) return relative(root, candidate);
  }
  return relative(root, base);
}

export function readSource(root: string, path: string): SourceFile {
  const { code, literals } = lex(readFileSync(join(root, path), 'utf8'));
  const literalAt = new Map(literals.map((l) => [l.start, l.text]));
  const imports: ImportRef[] = [];
  const add = (quoteAt: number, kind: ImportRef['kind'], bindings: string[]) => {
    const spec = literalAt.get(quoteAt);
    if (spec === undefined || spec.includes(EXPRESSION)) return;
    imports.push({ spec, target: resolveSpec(root, path, spec), kind, bindings });
  };
  for (const m of code.matchAll(FROM_CLAUSE)) {
    const kind = m[1] as 'import' | 'export';
    add(m.index + m[0].length - 1, kind, kind === 'import' ? bindingsOf(m[2]) : []);
  }
  for (const m of code.matchAll(BARE_IMPORT)) add(m.index + m[0].length - 1, 'import', []);
  for (const m of code.matchAll(DYNAMIC_IMPORT)) add(m.index + m[0].length - 1, 'dynamic', []);

  const localExports = [...code.matchAll(LOCAL_EXPORT)].flatMap((m) =>
    m[1]
      .split(',')
      .map(
        (s) =>
          s
            .trim()
            .replace(/^type\s+/, '')
            .split(/\s+/)[0],
      )
      .filter(Boolean),
  );

  const tables = new Set<string>();
  for (const { text } of literals) {
    for (const m of text.matchAll(TABLE_REF)) {
      tables.add(m[1]);
      let rest = text.slice(m.index + m[0].length);
      for (let next = NEXT_IN_LIST.exec(rest); next; next = NEXT_IN_LIST.exec(rest)) {
        tables.add(next[1]);
        rest = rest.slice(next[0].length);
      }
    }
  }
  for (const m of code.matchAll(TABLE_PROPERTY)) {
    const name = literalAt.get(m.index + m[0].length - 1);
    if (name && /^[a-z_][a-z0-9_]*$/.test(name)) tables.add(name);
  }
  return { path, imports, localExports, tables };
}
