import { PGlite } from '@electric-sql/pglite';
const pg = await PGlite.create();
await pg.exec('CREATE TABLE t (id int primary key, v text); INSERT INTO t VALUES (1, $$a$$), (2, $$b$$);');
await pg.exec('PREPARE q1 (int) AS SELECT * FROM t WHERE id = $1');
try { const r = await pg.query('EXECUTE q1($1)', [2]); console.log('EXECUTE with bind param works:', r.rows); } catch (e) { console.log('EXECUTE with bind param fails:', (e as Error).message); }
await pg.close();
