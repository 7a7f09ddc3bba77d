import { readFileSync } from 'node:fs';
import { cpus, totalmem } from 'node:os';
import type { StoreKind } from './lib-settings.ts';

// ---------------------------------------------------------------------------------------------------------------
// Result shape

export interface Table {
  title: string;
  columns: string[];
  rows: (string | number | null)[][];
  notes?: string[];
}

export interface AreaResult {
  area: string;
  store: StoreKind;
  tables: Table[];
  /** Free-form structured data (raw samples summary, plans, settings) written to the JSON file. */
  data: Record<string, unknown>;
  targets: { name: string; target: string; measured: string; met: boolean }[];
}

// ---------------------------------------------------------------------------------------------------------------
// Output

export function formatTable(t: Table): string {
  const cells = [t.columns, ...t.rows.map((r) => r.map((c) => (c === null || c === undefined ? '–' : String(c))))];
  const widths = t.columns.map((_, i) => Math.max(...cells.map((r) => (r[i] ?? '').length)));
  const line = (r: string[]) => r.map((c, i) => (i === 0 ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join('  ');
  const out = [
    `\n${t.title}`,
    line(cells[0]),
    widths.map((w) => '-'.repeat(w)).join('  '),
    ...cells.slice(1).map(line),
  ];
  for (const n of t.notes ?? []) out.push(`  * ${n}`);
  return out.join('\n');
}

export function machineInfo() {
  let model = cpus()[0]?.model ?? 'unknown';
  try {
    const m = /^model name\s*:\s*(.+)$/m.exec(readFileSync('/proc/cpuinfo', 'utf8'));
    if (m) model = m[1].trim();
  } catch {
    /* not Linux */
  }
  return {
    cpus: cpus().length,
    model,
    memoryGiB: Number((totalmem() / 1024 ** 3).toFixed(1)),
    node: process.version,
    platform: `${process.platform} ${process.arch}`,
  };
}
