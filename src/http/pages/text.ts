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
  'signin.locked': 'This account is locked. Check your email for an unlock link, or try again later.',
  'signin.rateLimited': 'Too many attempts. Wait a moment and try again.',
  'signin.captcha': 'This sign-in requires a captcha, which these pages cannot show. Use the application to sign in.',
  'signin.noMethods': 'No sign-in method is available here. Ask your administrator.',
  'signin.or': 'Or',
  'signin.signedInAs': 'You are signed in as {email}.',
  'signin.mustReset': 'You must set a new password before signing in.',
  'signin.setPassword': 'Set a new password',
  'method.unavailable': 'This sign-in method is not available.',
  'magic.request': 'Email me a sign-in link',
  'magic.sent': 'If an account exists for that email, we sent a sign-in link. It works once and for a short time.',
  'magic.title': 'Sign in with a link',
  'magic.confirm': 'Sign in',
  'magic.invalid': 'This sign-in link is invalid or has expired. Ask for a new one.',
  'code.request': 'Email me a code',
  'code.sms.request': 'Text me a code',
  'code.title': 'Enter your code',
  'code.sent': 'If an account exists for it, we sent a code. Enter it below.',
  'code.code': 'Code',
  'code.phone': 'Phone number (with country code, e.g. +15551234567)',
  'code.invalid': 'The code is not right or has expired.',
  'sso.title': 'Single sign-on',
  'sso.submit': 'Sign in with single sign-on',
  'sso.none': 'Single sign-on is not set up for this email. Sign in another way.',
  'social.with': 'Sign in with {provider}',
  'social.unavailable': 'This provider is not available right now.',
  'signup.title': 'Create an account',
  'signup.name': 'Full name',
  'signup.company': 'Company name',
  'signup.submit': 'Create account',
  'signup.sent': 'Check your email: we sent a link to activate your account.',
  'signup.closed': 'Sign-up is not open.',
  'signup.failed': 'We could not create this account. If you already have one, sign in or reset your password.',
  'signup.haveAccount': 'Already have an account? Sign in',
  'activate.title': 'Activate your account',
  'activate.submit': 'Activate',
  'activate.password': 'Choose a password',
  'activate.invalid': 'This activation link is invalid or has expired.',
  'forgot.title': 'Reset your password',
  'forgot.intro': 'Enter your email and we will send you a link to set a new password.',
  'forgot.submit': 'Send reset link',
  'forgot.sent': 'If an account exists for that email, we sent a link to reset the password.',
  'reset.title': 'Choose a new password',
  'reset.password': 'New password',
  'reset.submit': 'Set password',
  'reset.done': 'Your password was changed. Sign in with the new password.',
  'reset.invalid': 'This reset link is invalid or has expired. Ask for a new one.',
  'verify.title': 'Verify your email',
  'verify.submit': 'Verify my email',
  'verify.done': 'Your email is verified.',
  'verify.invalid': 'This verification link is invalid or has expired.',
  'unlock.title': 'Unlock your account',
  'unlock.submit': 'Unlock my account',
  'unlock.done': 'Your account is unlocked. You can sign in again.',
  'unlock.invalid': 'This unlock link is invalid or has expired.',
  'invite.title': 'Accept the invitation',
  'invite.submit': 'Accept and continue',
  'invite.invalid': 'This invitation link is invalid or has expired.',
  'logout.intro': 'Sign out of this browser?',
  'logout.done': 'You are signed out.',
  'link.missing': 'This link is incomplete. Open it again from the email.',
  'back.signin': 'Back to sign-in',
  'consent.title': 'Allow access',
  'consent.allow': 'Allow',
  'consent.deny': 'Deny',
  'picker.title': 'Choose an account',
  'logout.title': 'Sign out',
  'logout.confirm': 'Sign out',
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
