import { parse, protocol, type PGlite, type Results } from '@electric-sql/pglite';
import { preparedName } from './prepared.ts';

/**
 * Statements sent to PGlite as one wire-protocol buffer each, instead of through `PGlite.query()`, which makes six
 * separate calls into WebAssembly per statement (Parse, Describe, Bind, Describe, Execute, Sync) and parses each
 * reply. Here a statement is one call: Bind, Describe, Execute and Sync together, after a Parse.
 *
 * - A text marked with `prepared()` (src/storage/prepared.ts) becomes a named prepared statement the first time it
 *   runs: parsed and described once, then only bound and executed, so PostgreSQL can reuse its plan (as `pg` does on
 *   a server). PostgreSQL re-plans it by itself when a table it reads changes.
 * - Any other text is parsed each time as the unnamed statement, with the parameter types PostgreSQL reported the
 *   first time (cached per text, bounded), so it is still one call.
 *
 * Parameters are serialised, and rows parsed, by PGlite's own serialisers and parsers for the reported types, exactly
 * as `query()` does. Locks are the caller's: every call here must hold PGlite's query lock (`runExclusive`), and, outside
 * a transaction, its transaction lock too (see pglite.ts).
 */
const S = protocol.serialize;
const MAX_CACHED_TEXTS = 2000;

function concat(parts: Uint8Array[]): Uint8Array {
  let size = 0;
  for (const p of parts) size += p.length;
  const out = new Uint8Array(size);
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

export interface ProtocolRunner {
  /**
   * One statement with parameters (extended protocol). `first`, when given, is a simple-protocol text sent in the same
   * call just before it (a transaction's BEGIN); the answer is the statement's.
   */
  statement(sql: string, params: unknown[], inTransaction: boolean, first?: string): Promise<Results>;
  /** Statements without parameters (simple protocol; several separated by `;` allowed): the last result. */
  simple(sql: string, inTransaction: boolean, first?: string): Promise<Results>;
}

export function protocolRunner(pg: PGlite): ProtocolRunner {
  /** Named statements prepared on this instance: name → parameter type oids. */
  const named = new Map<string, number[]>();
  /** Unnamed texts: text → parameter type oids (oldest dropped first past MAX_CACHED_TEXTS). */
  const typesOf = new Map<string, number[]>();

  function values(params: unknown[], oids: number[]): (string | null)[] {
    return params.map((p, i) => {
      if (p === null || p === undefined) return null;
      const serialize = pg.serializers[oids[i]];
      return serialize ? serialize(p) : String(p);
    });
  }

  async function send(parts: Uint8Array[], inTransaction: boolean, first: string | undefined): Promise<Results> {
    const { messages } = await pg.execProtocol(concat(first ? [S.query(first), ...parts] : parts), {
      syncToFs: !inTransaction,
    });
    const results = parse.parseResults(messages, pg.parsers);
    return results[results.length - 1];
  }

  /** Parses `sql` as statement `name` ('' = unnamed) and answers the parameter types PostgreSQL inferred. */
  async function describe(sql: string, name: string): Promise<number[]> {
    const { messages } = await pg.execProtocol(
      concat([S.parse({ name, text: sql, types: [] }), S.describe({ type: 'S', name }), S.sync()]),
      { syncToFs: false },
    );
    return parse.parseDescribeStatementResults(messages);
  }

  return {
    async statement(sql, params, inTransaction, first) {
      const name = preparedName(sql);
      const tail = (oids: number[], statement: string) => [
        S.bind({ statement, values: values(params, oids) }),
        S.describe({ type: 'P' }),
        S.execute({}),
        S.sync(),
      ];
      if (name) {
        let oids = named.get(name);
        if (!oids) {
          oids = await describe(sql, name);
          named.set(name, oids);
        }
        return send(tail(oids, name), inTransaction, first);
      }
      let oids = typesOf.get(sql);
      if (!oids) {
        oids = await describe(sql, '');
        if (typesOf.size >= MAX_CACHED_TEXTS) typesOf.delete(typesOf.keys().next().value as string);
        typesOf.set(sql, oids);
      }
      return send([S.parse({ text: sql, types: oids }), ...tail(oids, '')], inTransaction, first);
    },

    async simple(sql, inTransaction, first) {
      return send([S.query(sql)], inTransaction, first);
    },
  };
}
