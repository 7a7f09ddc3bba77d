/**
 * Every text of the hosted pages, by key. English is the default; a locale is another object of the same keys
 * (missing keys fall back to English). `{name}` placeholders are filled by `t`.
 */
const en = {
  'page.error.title': 'Something went wrong',
  'page.error.back': 'Back to sign-in',
  'form.submit': 'Continue',
  'form.csrf': 'This form expired or was sent from another site. Reload the page and try again.',
  'signin.title': 'Sign in',
  'signin.email': 'Email',
  'signin.password': 'Password',
  'signin.submit': 'Sign in',
  'signin.failed': 'The email or password is not right.',
  'signin.forgot': 'Forgot your password?',
  'signin.signup': 'Create an account',
  'consent.title': 'Allow access',
  'consent.allow': 'Allow',
  'consent.deny': 'Deny',
  'picker.title': 'Choose an account',
  'logout.title': 'Sign out',
  'logout.confirm': 'Sign out',
  'oidc.error.title': 'This sign-in request cannot continue',
  'oidc.error.code': 'Error code: {code}',
  'oidc.consent.intro': '{app} asks for access to your account:',
  'oidc.scope.openid': 'Know who you are',
  'oidc.scope.profile': 'Your name and profile picture',
  'oidc.scope.email': 'Your email address',
  'oidc.scope.offline_access': 'Stay signed in to {app}',
  'oidc.picker.intro': 'Which account do you want to use with {app}?',
  'oidc.logout.question': 'Sign out of {app}?',
  'oidc.logout.stay': 'Stay signed in',
  'oidc.logout.done.title': 'Signed out',
  'oidc.logout.done': 'You are signed out.',
} as const;

export type TextKey = keyof typeof en;
export type Catalogue = Partial<Record<TextKey, string>>;

const catalogues: Record<string, Catalogue> = { en };

/** Registers a locale's texts (a deployment may add its own). */
export function addLocale(locale: string, texts: Catalogue) {
  catalogues[locale] = { ...catalogues[locale], ...texts };
}

/** The first of the requested locales we have (ui_locales / Accept-Language order), else English. */
export function pickLocale(requested: string | undefined): string {
  for (const tag of (requested ?? '').split(/[\s,]+/)) {
    const lang = tag.split(';')[0]?.trim().toLowerCase();
    if (!lang) continue;
    if (catalogues[lang]) return lang;
    const base = lang.split('-')[0] as string;
    if (catalogues[base]) return base;
  }
  return 'en';
}

export function t(locale: string, key: TextKey, vars: Record<string, string | number> = {}): string {
  const text = catalogues[locale]?.[key] ?? en[key];
  return text.replace(/\{(\w+)\}/g, (m, k: string) => (k in vars ? String(vars[k]) : m));
}
