import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import type { ClosableDb } from '../src/storage/db.ts';
import { migrate } from '../src/storage/migrate.ts';
import { openPglite } from '../src/storage/pglite.ts';
import { openPostgres } from '../src/storage/postgres.ts';
import { DEFAULT_BENCH_DATABASE_URL, type StoreKind } from './lib-settings.ts';

// ---------------------------------------------------------------------------------------------------------------
// Stores

export interface BenchDb {
  db: ClosableDb;
  kind: StoreKind;
  /** PGlite: the DATA_DIR holding pgdata/ (the server's layout). */
  dataDir: string;
  /** PostgreSQL: a DATABASE_URL that reaches the same data (for a server process). */
  databaseUrl?: string;
  /** Closes the database (PGlite: flushes it to dataDir) without removing anything. */
  close(): Promise<void>;
  /** Closes if needed and removes the data: the temporary directory, the database or schema. */
  destroy(): Promise<void>;
}

const adminUrl = () => process.env.BENCH_DATABASE_URL || DEFAULT_BENCH_DATABASE_URL;

/** Databases not yet destroyed, so an interrupted run (Ctrl-C) can still drop them: see destroyAllBenchDbs. */
const live = new Set<BenchDb>();

export async function destroyAllBenchDbs(): Promise<void> {
  for (const b of [...live]) await b.destroy().catch(() => {});
}

function track(b: BenchDb): BenchDb {
  const destroy = b.destroy;
  b.destroy = async () => {
    live.delete(b);
    await destroy();
  };
  live.add(b);
  return b;
}

/**
 * A fresh, migrated database. PGlite: on disk in a temporary DATA_DIR (as the server opens it). PostgreSQL: a new
 * database on BENCH_DATABASE_URL's server, or a new schema when the role may not create databases; dropped by destroy().
 */
export async function openBenchDb(kind: StoreKind, label: string): Promise<BenchDb> {
  const dataDir = mkdtempSync(join(tmpdir(), `gatehouse-bench-${label}-`));
  if (kind === 'pglite') {
    const db = await openPglite({ dataDir: join(dataDir, 'pgdata') });
    await migrate(db);
    let closed = false;
    const close = async () => {
      if (!closed) await db.close();
      closed = true;
    };
    return track({
      db,
      kind,
      dataDir,
      close,
      async destroy() {
        try {
          await close();
        } finally {
          rmSync(dataDir, { recursive: true, force: true });
        }
      },
    });
  }

  const base = adminUrl();
  const name = `gatehouse_bench_${label.replace(/[^a-z0-9]/g, '')}_${randomBytes(4).toString('hex')}`;
  const admin = new pg.Client({ connectionString: base });
  await admin.connect();
  let mode: 'database' | 'schema' = 'database';
  try {
    await admin.query(`CREATE DATABASE ${name}`);
  } catch {
    mode = 'schema';
  } finally {
    await admin.end();
  }
  let db: Awaited<ReturnType<typeof openPostgres>>;
  let databaseUrl: string;
  if (mode === 'database') {
    const u = new URL(base);
    u.pathname = `/${name}`;
    databaseUrl = u.toString();
    db = await openPostgres({ url: databaseUrl });
  } else {
    db = await openPostgres({ url: base, schema: name });
    const u = new URL(base);
    u.searchParams.set('options', `-c search_path=${name}`);
    databaseUrl = u.toString();
  }
  await migrate(db);
  let closed = false;
  const close = async () => {
    if (!closed) await db.close();
    closed = true;
  };
  const withAdmin = async (sql: string) => {
    const c = new pg.Client({ connectionString: base });
    await c.connect();
    try {
      await c.query(sql);
    } finally {
      await c.end();
    }
  };
  return track({
    db,
    kind,
    dataDir,
    databaseUrl,
    close,
    async destroy() {
      try {
        await close().catch(() => {});
        await withAdmin(
          mode === 'database'
            ? `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`
            : `DROP SCHEMA IF EXISTS ${name} CASCADE`,
        );
      } finally {
        rmSync(dataDir, { recursive: true, force: true });
      }
    },
  });
}
