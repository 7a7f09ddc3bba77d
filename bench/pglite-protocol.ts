/**
 * `npx tsx bench/pglite-protocol.ts`: what one small statement costs on PGlite through its `query()` API against the
 * same statement sent through the raw extended protocol in one buffer (unnamed, and as a named prepared statement
 * bound again each time). The evidence behind src/storage/pglite-protocol.ts, which the PGlite store now uses.
 */
import { PGlite, protocol } from '@electric-sql/pglite';
const pg = await PGlite.create();
await pg.exec(
  `CREATE TABLE t (id uuid PRIMARY KEY, email text, n int, data jsonb, created_at timestamptz DEFAULT now()); INSERT INTO t SELECT gen_random_uuid(), 'u'||g||'@x.test', g, '{"a":1}' FROM generate_series(1,10000) g; ANALYZE t;`,
);
const ids = (await pg.query<{ id: string }>('SELECT id FROM t LIMIT 1000')).rows.map((r) => r.id);
const S = protocol.serialize;
const cat = (bufs: Uint8Array[]) => {
  const n = bufs.reduce((a, b) => a + b.length, 0);
  const out = new Uint8Array(n);
  let o = 0;
  for (const b of bufs) {
    out.set(b, o);
    o += b.length;
  }
  return out;
};
const sql = 'SELECT * FROM t WHERE id = $1';
async function viaQuery(i: number) {
  return (await pg.query(sql, [ids[i % 1000]])).rows;
}
async function rawUnnamed(i: number) {
  const msg = cat([
    S.parse({ text: sql, types: [] }),
    S.bind({ values: [ids[i % 1000]] }),
    S.describe({ type: 'P' }),
    S.execute({}),
    S.sync(),
  ]);
  const r = await pg.execProtocol(msg);
  return r.messages;
}
let prepared = false;
async function rawNamed(i: number) {
  const parts: Uint8Array[] = [];
  if (!prepared) {
    parts.push(S.parse({ name: 's1', text: sql, types: [] }));
    prepared = true;
  }
  parts.push(S.bind({ statement: 's1', values: [ids[i % 1000]] }), S.describe({ type: 'P' }), S.execute({}), S.sync());
  const r = await pg.execProtocol(cat(parts));
  return r.messages;
}

for (const [name, fn] of [
  ['query', viaQuery],
  ['rawUnnamed', rawUnnamed],
  ['rawNamed', rawNamed],
  ['query', viaQuery],
  ['rawUnnamed', rawUnnamed],
  ['rawNamed', rawNamed],
] as const) {
  for (let i = 0; i < 300; i++) await fn(i);
  const t0 = performance.now();
  const N = 3000;
  for (let i = 0; i < N; i++) await fn(i);
  console.log(name, (((performance.now() - t0) / N) * 1000).toFixed(0), 'us/stmt');
}
