import type { TestApp } from './harness.ts';

export interface PageReply {
  status: number;
  body: string;
  headers: Record<string, string | string[] | undefined>;
  /** The Location of a redirect. */
  location?: string;
}

const setCookies = (h: PageReply['headers']) => {
  const v = h['set-cookie'];
  return v === undefined ? [] : Array.isArray(v) ? v : [v];
};

/**
 * A browser as far as the hosted pages can tell, over app.inject: a cookie jar (Max-Age=0 deletes), form posts
 * (application/x-www-form-urlencoded) with the CSRF token of the last page seen, and Sec-Fetch-Site as a browser
 * sends it (same-origin unless a test says otherwise).
 */
export class PageClient {
  readonly jar = new Map<string, string>();
  csrf = '';
  constructor(readonly t: TestApp) {}

  setCookie(name: string, value: string) {
    this.jar.set(name, value);
  }
  cookie(name: string): string | undefined {
    return this.jar.get(name);
  }
  private header() {
    return [...this.jar].map(([k, v]) => `${k}=${v}`).join('; ');
  }
  private absorb(headers: PageReply['headers']) {
    for (const c of setCookies(headers)) {
      const [pair, ...attrs] = c.split(';');
      const i = pair.indexOf('=');
      const name = pair.slice(0, i).trim();
      const value = pair.slice(i + 1).trim();
      if (attrs.some((a) => /^\s*max-age=0\s*$/i.test(a))) this.jar.delete(name);
      else this.jar.set(name, value);
    }
  }

  private async send(method: 'GET' | 'POST', url: string, payload?: string, extra: Record<string, string> = {}) {
    const headers: Record<string, string> = { 'sec-fetch-site': 'same-origin', ...extra };
    const cookie = this.header();
    if (cookie) headers.cookie = cookie;
    if (payload !== undefined) headers['content-type'] = 'application/x-www-form-urlencoded';
    const res = await this.t.app.inject({ method, url, headers, payload });
    const r: PageReply = {
      status: res.statusCode,
      body: res.body,
      headers: res.headers as PageReply['headers'],
      location: typeof res.headers.location === 'string' ? res.headers.location : undefined,
    };
    this.absorb(r.headers);
    const m = /name="_csrf" value="([^"]+)"/.exec(r.body);
    if (m) this.csrf = m[1];
    return r;
  }

  get(url: string) {
    return this.send('GET', url);
  }

  /** Posts a form; `_csrf` is the last page's unless the fields name one (or `csrf: false` leaves it out). */
  post(url: string, fields: Record<string, string>, o: { csrf?: boolean; site?: string } = {}) {
    const form = new URLSearchParams(o.csrf === false ? fields : { _csrf: this.csrf, ...fields });
    return this.send('POST', url, form.toString(), o.site ? { 'sec-fetch-site': o.site } : {});
  }
}

/** The value of a hidden or text input named `name` in a page. */
export function inputValue(body: string, name: string): string | undefined {
  const v = new RegExp(`name="${name}"[^>]*value="([^"]*)"`).exec(body)?.[1];
  return v === undefined ? undefined : unescapeHtml(v);
}

const ENTITIES: Record<string, string> = { '&amp;': '&', '&lt;': '<', '&gt;': '>', '&quot;': '"', '&#39;': "'" };
export const unescapeHtml = (s: string) => s.replace(/&(amp|lt|gt|quot|#39);/g, (e) => ENTITIES[e] as string);
