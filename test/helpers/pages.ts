import type { OutgoingHttpHeaders } from 'node:http';
import type { TestApp } from './harness.ts';

export interface PageReply {
  status: number;
  html: string;
  headers: OutgoingHttpHeaders;
  /** The Location header of a redirect. */
  location?: string;
  /** The cookies this answer set, name → value ('' when cleared), with their attributes. */
  setCookies: Record<string, { value: string; attrs: string }>;
}

/**
 * A browser-like client of the hosted pages over app.inject: it keeps cookies (a jar), reads the CSRF token of the
 * last page it loaded and posts forms url-encoded, as a browser without JavaScript does.
 */
export class PageClient {
  readonly jar = new Map<string, string>();
  csrf = '';
  constructor(readonly t: TestApp) {}

  private cookieHeader(): string {
    return [...this.jar].map(([k, v]) => `${k}=${v}`).join('; ');
  }

  private async send(method: 'GET' | 'POST', url: string, payload?: string, headers: Record<string, string> = {}) {
    const res = await this.t.app.inject({
      method,
      url,
      payload,
      headers: {
        ...(this.jar.size ? { cookie: this.cookieHeader() } : {}),
        ...(payload !== undefined ? { 'content-type': 'application/x-www-form-urlencoded' } : {}),
        ...headers,
      },
    });
    const setCookies: PageReply['setCookies'] = {};
    const raw = res.headers['set-cookie'];
    for (const c of Array.isArray(raw) ? raw : raw ? [raw] : []) {
      const [pair, ...attrs] = c.split(';');
      const i = pair.indexOf('=');
      const name = pair.slice(0, i).trim();
      const value = pair.slice(i + 1).trim();
      setCookies[name] = { value, attrs: attrs.join(';') };
      if (/max-age=0/i.test(c) || value === '') this.jar.delete(name);
      else this.jar.set(name, value);
    }
    const html = res.body;
    const token = /name="_csrf" value="([^"]+)"/.exec(html)?.[1];
    if (token) this.csrf = token;
    const location = res.headers.location as string | undefined;
    return { status: res.statusCode, html, headers: res.headers, location, setCookies };
  }

  get(url: string, headers: Record<string, string> = {}): Promise<PageReply> {
    return this.send('GET', url, undefined, headers);
  }

  /** Posts a form; the CSRF token of the last page is added unless `_csrf` is given (null: none sent). */
  post(
    url: string,
    fields: Record<string, string>,
    o: { csrf?: string | null; headers?: Record<string, string> } = {},
  ): Promise<PageReply> {
    const body = new URLSearchParams(fields);
    const csrf = o.csrf === undefined ? this.csrf : o.csrf;
    if (csrf !== null) body.set('_csrf', csrf);
    return this.send('POST', url, body.toString(), o.headers);
  }
}

/** The hidden inputs of the first form posting to `action` on a page, by name. */
export function hiddenFields(html: string, action: string): Record<string, string> {
  const form = new RegExp(`<form[^>]*action="${action.replace(/[/.?]/g, '\\$&')}"[^>]*>([\\s\\S]*?)</form>`).exec(html);
  const out: Record<string, string> = {};
  for (const m of (form?.[1] ?? '').matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g)) {
    if (m[1] !== '_csrf') out[m[1]] = decodeEntities(m[2]);
  }
  return out;
}

const decodeEntities = (s: string) =>
  s
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&amp;/g, '&');

/** Inputs a person fills in (not hidden) whose id no <label for> names: none on an accessible page. */
export function unlabelledInputs(html: string): string[] {
  const labels = new Set([...html.matchAll(/<label for="([^"]+)"/g)].map((m) => m[1]));
  const ids = new Set<string>();
  const missing: string[] = [];
  for (const m of html.matchAll(/<input ([^>]*)>/g)) {
    if (/type="hidden"/.test(m[1])) continue;
    const id = /id="([^"]+)"/.exec(m[1])?.[1];
    if (!id || !labels.has(id) || ids.has(id)) missing.push(m[0]);
    if (id) ids.add(id);
  }
  return missing;
}
