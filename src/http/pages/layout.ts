import { html, type SafeHtml } from './html.ts';
import type { TextKey } from './text.ts';
import { t } from './text.ts';

/** How a page looks for this environment: the login box's branding (name, logo; colours come as brand.css). */
export interface Brand {
  name: string;
  logoUrl?: string;
}

export interface View {
  locale: string;
  brand: Brand;
  title: TextKey | { text: string };
  body: SafeHtml;
  /** Script files under /account/assets that the page needs (WebAuthn): no inline script is ever sent. */
  scripts?: string[];
}

/** The whole document: one stylesheet pair, no inline script or style, so the CSP can forbid both. */
export function layout(v: View): string {
  const title = typeof v.title === 'string' ? t(v.locale, v.title) : v.title.text;
  return html`<!doctype html>
<html lang="${v.locale}">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>${title} · ${v.brand.name}</title>
<link rel="stylesheet" href="/account/assets/site.css">
<link rel="stylesheet" href="/account/assets/brand.css">
${(v.scripts ?? []).map((s) => html`<script src="/account/assets/${s}" defer></script>`)}
</head>
<body>
<main class="box">
<header>${v.brand.logoUrl ? html`<img class="logo" src="${v.brand.logoUrl}" alt="${v.brand.name}">` : html`<p class="brand">${v.brand.name}</p>`}
<h1>${title}</h1></header>
${v.body}
</main>
</body>
</html>`.value;
}

/** A labelled input: every field has a visible label tied to it, so pages work with a screen reader and keyboard. */
export function field(a: {
  name: string;
  label: string;
  type?: string;
  value?: string;
  autocomplete?: string;
  required?: boolean;
  autofocus?: boolean;
  inputmode?: string;
  /** The element id when a page has two forms with a field of the same name (default `f-<name>`). */
  id?: string;
}): SafeHtml {
  const id = a.id ?? `f-${a.name}`;
  return html`<p class="field"><label for="${id}">${a.label}</label>
<input id="${id}" name="${a.name}" type="${a.type ?? 'text'}"${a.value !== undefined ? html` value="${a.value}"` : ''}${a.autocomplete ? html` autocomplete="${a.autocomplete}"` : ''}${a.inputmode ? html` inputmode="${a.inputmode}"` : ''}${a.required ? html` required` : ''}${a.autofocus ? html` autofocus` : ''}></p>`;
}

/** A message box announced to screen readers (role=alert for errors, status otherwise). */
export function notice(kind: 'error' | 'info', text: string): SafeHtml {
  return html`<p class="notice ${kind}" role="${kind === 'error' ? 'alert' : 'status'}">${text}</p>`;
}
