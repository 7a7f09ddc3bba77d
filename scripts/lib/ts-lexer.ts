/**
 * A small TypeScript lexer for the repository checks: it finds comments, string and template literals and regular
 * expressions, so that checks can search code without matching text inside literals or comments, and search SQL only
 * inside literals. (The TypeScript package in use ships no JavaScript compiler API.)
 */

/** What a template's `${…}` part reads as in `Literal.text`. */
// biome-ignore lint/suspicious/noTemplateCurlyInString: the placeholder text itself
export const EXPRESSION = '${}';

/** A string or template literal. `text` is its content; a template's `${…}` parts read as `${}`. */
export interface Literal {
  /** Offset of the opening quote or backtick in the source (and in `code`). */
  start: number;
  text: string;
}

export interface Lexed {
  /** The source with comments and the content of literals blanked (newlines kept), quotes and backticks kept. */
  code: string;
  literals: Literal[];
}

/** After these characters a `/` starts a regular expression, not a division. */
const BEFORE_REGEX = new Set('(,=:[!&|?{};+-*%<>~^'.split(''));
const KEYWORDS_BEFORE_REGEX = new Set([
  'return',
  'typeof',
  'case',
  'do',
  'else',
  'in',
  'of',
  'new',
  'delete',
  'void',
  'throw',
  'yield',
  'await',
  'instanceof',
]);

export function lex(src: string): Lexed {
  const out = src.split('');
  const literals: Literal[] = [];
  const blank = (from: number, to: number) => {
    for (let k = from; k < to; k++) if (out[k] !== '\n') out[k] = ' ';
  };
  // Templates being read, innermost last; `depth` is the brace depth at which its current `${` part ends.
  const templates: { start: number; text: string; depth: number }[] = [];
  let depth = 0;
  let prev = ''; // the last significant character of code, or the last word
  let i = 0;

  // Reads template text from i up to its closing backtick (the literal ends) or a `${` (back to code).
  const readTemplate = () => {
    const t = templates[templates.length - 1];
    const from = i;
    while (i < src.length) {
      const c = src[i];
      if (c === '\\') {
        t.text += src.slice(i, i + 2);
        i += 2;
        continue;
      }
      if (c === '`') {
        blank(from, i);
        literals.push({ start: t.start, text: t.text });
        templates.pop();
        i++;
        prev = ')';
        return;
      }
      if (c === '$' && src[i + 1] === '{') {
        blank(from, i);
        t.text += EXPRESSION;
        t.depth = depth;
        depth++;
        i += 2;
        prev = '{';
        return;
      }
      t.text += c;
      i++;
    }
    throw new Error(`unterminated template literal at offset ${t.start}`);
  };

  while (i < src.length) {
    const c = src[i];
    const next = src[i + 1];
    if (c === '/' && next === '/') {
      const end = src.indexOf('\n', i);
      const stop = end === -1 ? src.length : end;
      blank(i, stop);
      i = stop;
      continue;
    }
    if (c === '/' && next === '*') {
      const end = src.indexOf('*/', i + 2);
      if (end === -1) throw new Error(`unterminated comment at offset ${i}`);
      blank(i, end + 2);
      i = end + 2;
      continue;
    }
    if (c === "'" || c === '"') {
      const start = i;
      let text = '';
      i++;
      while (i < src.length && src[i] !== c) {
        if (src[i] === '\n') throw new Error(`unterminated string at offset ${start}`);
        if (src[i] === '\\') {
          text += src.slice(i, i + 2);
          i += 2;
          continue;
        }
        text += src[i];
        i++;
      }
      blank(start + 1, i);
      literals.push({ start, text });
      i++;
      prev = ')';
      continue;
    }
    if (c === '`') {
      templates.push({ start: i, text: '', depth: -1 });
      i++;
      readTemplate();
      continue;
    }
    if (c === '/' && (prev === '' || BEFORE_REGEX.has(prev) || KEYWORDS_BEFORE_REGEX.has(prev))) {
      const start = i;
      let inClass = false;
      i++;
      while (i < src.length && (inClass || src[i] !== '/')) {
        if (src[i] === '\n') throw new Error(`unterminated regular expression at offset ${start}`);
        if (src[i] === '\\') i++;
        else if (src[i] === '[') inClass = true;
        else if (src[i] === ']') inClass = false;
        i++;
      }
      i++;
      while (/[a-z]/.test(src[i] ?? '')) i++;
      blank(start + 1, i - 1);
      prev = ')';
      continue;
    }
    if (c === '{') depth++;
    if (c === '}') {
      depth--;
      const t = templates[templates.length - 1];
      if (t && t.depth === depth) {
        i++;
        readTemplate();
        continue;
      }
    }
    if (/[\w$]/.test(c)) {
      let j = i;
      while (j < src.length && /[\w$]/.test(src[j])) j++;
      prev = src.slice(i, j);
      i = j;
      continue;
    }
    if (!/\s/.test(c)) prev = c;
    i++;
  }
  if (templates.length > 0) throw new Error('unterminated template literal');
  return { code: out.join(''), literals };
}
