/**
 * A small typed SQL builder: `sql\`... ${value} ...\`` is a fragment whose values become `$n` parameters, numbered
 * when the whole statement is built, so fragments that different modules own can be embedded in one statement
 * without anyone counting parameters by hand. A fragment embedded in a fragment is inlined and renumbered.
 */

/** A value that takes one parameter number however many times it is embedded (the same user id in several items). */
export class Param {
  constructor(readonly value: unknown) {}
}

/** SQL text and the values it embeds; `build()` numbers them. Values are never put into the text. */
export class Sql {
  /** `strings.length === args.length + 1`, as a template literal's. */
  constructor(
    readonly strings: readonly string[],
    readonly args: readonly unknown[],
  ) {}

  /** The text with `$first`, `$first + 1`, ... in order of first use, and the values in that order. */
  build(first = 1): { text: string; values: unknown[] } {
    const values: unknown[] = [];
    const numbers = new Map<Param, number>();
    const text = render(this, (v) => {
      if (!(v instanceof Param)) return first + values.push(v) - 1;
      let n = numbers.get(v);
      if (n === undefined) numbers.set(v, (n = first + values.push(v.value) - 1));
      return n;
    });
    return { text, values };
  }
}

function render(s: Sql, number: (v: unknown) => number): string {
  let text = s.strings[0];
  for (let i = 0; i < s.args.length; i++) {
    const a = s.args[i];
    text += (a instanceof Sql ? render(a, number) : `$${number(a)}`) + s.strings[i + 1];
  }
  return text;
}

/** A fragment: each `${x}` is a parameter, or the fragment `x` inlined when `x` is a Sql. */
export function sql(strings: TemplateStringsArray, ...args: unknown[]): Sql {
  return new Sql(strings, args);
}

/** Constant SQL text with no values (a column list, a CTE name, an expression another module owns as text). */
sql.raw = (text: string): Sql => new Sql([text], []);

/** The fragments `parts` one after the other, `separator` (constant text) between them. */
sql.join = (parts: readonly Sql[], separator: string): Sql => {
  if (parts.length === 0) return sql.raw('');
  return new Sql(['', ...parts.slice(1).map(() => separator), ''], parts);
};

/** The values `values` as parameters separated by commas (a VALUES row, an IN list). */
sql.list = (values: readonly unknown[]): Sql =>
  values.length === 0 ? sql.raw('') : new Sql(['', ...values.slice(1).map(() => ', '), ''], values);

/** A value shared by several fragments: see Param. */
sql.param = (value: unknown): Param => new Param(value);

/**
 * `text` with each `{name}` replaced by the fragment `named[name]` (SQL that another module registered as text with
 * placeholders, such as a role source's `{tenant}` and `{user}`).
 */
sql.fill = (text: string, named: Record<string, Sql>): Sql => {
  const pieces = text.split(/\{(\w+)\}/);
  const strings: string[] = [pieces[0]];
  const args: Sql[] = [];
  for (let i = 1; i < pieces.length; i += 2) {
    const part = named[pieces[i]];
    if (part) {
      args.push(part);
      strings.push(pieces[i + 1]);
    } else strings[strings.length - 1] += `{${pieces[i]}}${pieces[i + 1]}`;
  }
  return new Sql(strings, args);
};
