/**
 * Module boundaries of src/modules/<name>/ (docs/architecture.md, "Module boundaries"). Reports:
 *   deep imports     another module's file imported other than through its index.ts
 *   store re-exports an index.ts that re-exports a store file
 *   cycle edges      module imports that lie on a cycle between modules
 *   foreign SQL      SQL naming a table another module owns (scripts/table-owners.ts)
 * Known violations are listed in scripts/module-baseline.json. The check fails on a violation not in the baseline and
 * on a baseline entry that no longer occurs, so the baseline only shrinks.
 * Usage: tsx scripts/check-modules.ts [--all] [--prune-baseline]
 *   --all             list every violation, not only those missing from the baseline
 *   --prune-baseline  delete the baseline entries that no longer occur (never adds one)
 */
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { isStore, listTs, readSource, type SourceFile } from './lib/sources.ts';
import { PLATFORM, TABLE_OWNERS } from './table-owners.ts';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const BASELINE = 'scripts/module-baseline.json';

const KINDS = {
  deepImports: "deep imports (another module's file, not its index.ts)",
  storeReexports: 'store re-exports (an index.ts re-exporting a store file)',
  cycleEdges: 'cycle edges (module imports on a cycle between modules)',
  foreignSql: 'foreign SQL (a table another module owns)',
} as const;
type Kind = keyof typeof KINDS;
type Findings = Record<Kind, Map<string, string>>;

const moduleOf = (path: string) => /^src\/modules\/([^/]+)\//.exec(path)?.[1];
const indexOf = (mod: string) => `src/modules/${mod}/index.ts`;

function check(files: SourceFile[], modules: Set<string>): { findings: Findings; cycles: string[][] } {
  const findings: Findings = {
    deepImports: new Map(),
    storeReexports: new Map(),
    cycleEdges: new Map(),
    foreignSql: new Map(),
  };
  const edges = new Map<string, Map<string, Set<string>>>(); // from module → to module → files that import

  for (const f of files) {
    const from = moduleOf(f.path);
    const fromStore = new Set<string>();
    for (const imp of f.imports) {
      if (!imp.target) continue;
      const to = moduleOf(imp.target);
      if (imp.kind === 'import' && isStore(imp.target)) for (const b of imp.bindings) fromStore.add(b);
      if (f.path === indexOf(from ?? '') && imp.kind === 'export' && isStore(imp.target)) {
        findings.storeReexports.set(`${f.path} -> ${imp.target}`, `export … from '${imp.spec}'`);
      }
      if (!to || to === from) continue;
      if (imp.target !== indexOf(to)) {
        findings.deepImports.set(`${f.path} -> ${imp.target}`, `${imp.kind} '${imp.spec}'`);
      }
      if (from) {
        const byTarget = edges.get(from) ?? new Map<string, Set<string>>();
        edges.set(from, byTarget.set(to, (byTarget.get(to) ?? new Set()).add(f.path)));
      }
    }
    if (from && f.path === indexOf(from)) {
      for (const name of f.localExports.filter((n) => fromStore.has(n))) {
        findings.storeReexports.set(`${f.path} -> ${name}`, `export { ${name} } of a name imported from a store`);
      }
    }
    const owner = from ?? PLATFORM;
    for (const table of f.tables) {
      const tableOwner = TABLE_OWNERS.get(table);
      if (tableOwner && tableOwner !== owner) {
        findings.foreignSql.set(`${f.path} -> ${table}`, `owned by ${tableOwner}`);
      }
    }
  }

  const cycles = stronglyConnected([...modules], (m) => [...(edges.get(m)?.keys() ?? [])]).filter((c) => c.length > 1);
  for (const cycle of cycles) {
    const members = new Set(cycle);
    for (const a of cycle) {
      for (const [b, via] of edges.get(a) ?? []) {
        if (members.has(b)) findings.cycleEdges.set(`${a} -> ${b}`, `via ${[...via].join(', ')}`);
      }
    }
  }
  return { findings, cycles };
}

/** Tarjan's algorithm: the strongly connected components, each sorted, in a stable order. */
function stronglyConnected(nodes: string[], next: (n: string) => string[]): string[][] {
  let counter = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const out: string[][] = [];
  const visit = (v: string) => {
    index.set(v, counter);
    low.set(v, counter++);
    stack.push(v);
    onStack.add(v);
    for (const w of next(v).sort()) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) === index.get(v)) {
      const scc: string[] = [];
      for (let w = stack.pop()!; ; w = stack.pop()!) {
        onStack.delete(w);
        scc.push(w);
        if (w === v) break;
      }
      out.push(scc.sort());
    }
  };
  for (const n of [...nodes].sort()) if (!index.has(n)) visit(n);
  return out.sort((a, b) => a[0].localeCompare(b[0]));
}

/** Problems of the ownership map itself: every table a migration creates needs exactly one known owner. */
function ownershipProblems(modules: Set<string>): string[] {
  const created = new Set<string>();
  for (const name of readdirSync(join(ROOT, 'migrations')).filter((n) => n.endsWith('.sql'))) {
    const sql = readFileSync(join(ROOT, 'migrations', name), 'utf8');
    for (const m of sql.matchAll(/\bCREATE\s+(?:UNLOGGED\s+)?TABLE\s+(?:IF\s+NOT\s+EXISTS\s+)?([a-z_][a-z0-9_]*)/gi)) {
      created.add(m[1].toLowerCase());
    }
  }
  const problems: string[] = [];
  for (const t of [...created].sort()) {
    if (!TABLE_OWNERS.has(t)) problems.push(`table ${t} (migrations/) has no owner in scripts/table-owners.ts`);
  }
  for (const [t, owner] of TABLE_OWNERS) {
    if (owner !== PLATFORM && !modules.has(owner)) problems.push(`table ${t}: owner ${owner} is not a module`);
    if (owner !== PLATFORM && !created.has(t))
      problems.push(`table ${t} is in scripts/table-owners.ts, no migration creates it`);
  }
  return problems;
}

function main() {
  const args = new Set(process.argv.slice(2));
  const modules = new Set(
    readdirSync(join(ROOT, 'src/modules'), { withFileTypes: true })
      .filter((d) => d.isDirectory())
      .map((d) => d.name),
  );
  const files = listTs(ROOT, 'src').map((p) => readSource(ROOT, p));
  const { findings, cycles } = check(files, modules);
  const problems = ownershipProblems(modules);

  const baseline: Partial<Record<Kind, string[]>> = existsSync(join(ROOT, BASELINE))
    ? JSON.parse(readFileSync(join(ROOT, BASELINE), 'utf8'))
    : {};
  if (args.has('--prune-baseline')) {
    for (const kind of Object.keys(KINDS) as Kind[])
      baseline[kind] = (baseline[kind] ?? []).filter((k) => findings[kind].has(k));
    writeFileSync(join(ROOT, BASELINE), `${JSON.stringify(baseline, null, 2)}\n`);
    console.log(`pruned ${BASELINE}`);
  }

  console.log(`Module boundaries: ${files.length} files in src/, ${modules.size} modules`);
  let failed = problems.length > 0;
  for (const kind of Object.keys(KINDS) as Kind[]) {
    const known = new Set(baseline[kind] ?? []);
    const found = findings[kind];
    const fresh = [...found.keys()].filter((k) => !known.has(k)).sort();
    const gone = [...known].filter((k) => !found.has(k)).sort();
    console.log(`\n${KINDS[kind]}: ${found.size} (${found.size - fresh.length} in the baseline)`);
    const listed = args.has('--all') ? [...found.keys()].sort() : fresh;
    for (const k of listed) console.log(`  ${known.has(k) ? '   ' : 'NEW'} ${k}  [${found.get(k)}]`);
    for (const k of gone) console.log(`  GONE ${k}: fixed, remove it from ${BASELINE}`);
    failed ||= fresh.length > 0 || gone.length > 0;
  }
  console.log(`\nModule cycles: ${cycles.length === 0 ? 'none' : cycles.length}`);
  for (const c of cycles) console.log(`  {${c.join(', ')}}`);
  for (const p of problems) console.log(`\nTable ownership: ${p}`);
  if (failed) {
    console.log(
      `\nFAILED. NEW: keep modules apart (import another module only through its index.ts, which exports no store; ` +
        `no SQL on another module's tables; no cycle). GONE: delete the entry from ${BASELINE}.`,
    );
    process.exitCode = 1;
  } else console.log('\nOK');
}

main();
