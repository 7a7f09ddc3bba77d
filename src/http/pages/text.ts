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
  'mfa.title': 'Two-step verification',
  'mfa.expired': 'This sign-in expired or is no longer valid. Sign in again.',
  'mfa.signin': 'Sign in again',
  'mfa.code': 'Code',
  'mfa.remember': 'Remember this device',
  'mfa.verify': 'Verify',
  'mfa.other': 'Other ways to verify',
  'mfa.totp.intro': 'Enter the 6-digit code from your authenticator app.',
  'mfa.totp.link': 'Use my authenticator app',
  'mfa.sms.link': 'Text a code to {phone}',
  'mfa.sms.intro': 'We will text a code to {phone}.',
  'mfa.sms.sent': 'We texted a code to {phone}. Enter it below.',
  'mfa.email.link': 'Email a code to {email}',
  'mfa.email.intro': 'We will email a code to {email}.',
  'mfa.email.sent': 'We emailed a code to {email}. Enter it below.',
  'mfa.send': 'Send the code',
  'mfa.recovery.link': 'Use a recovery code',
  'mfa.recovery.intro':
    'A recovery code removes your second factors, so you can set up a new one. Each code works once.',
  'mfa.recovery.code': 'Recovery code',
  'mfa.recovery.submit': 'Use the recovery code',
  'mfa.recovery.done': 'Your second factors were removed. Sign in again to continue.',
  'mfa.enrol.title': 'Set up an authenticator app',
  'mfa.enrol.intro': 'Scan this QR code with your authenticator app, or type the key below into it.',
  'mfa.enrol.qr': 'QR code to add this account to an authenticator app',
  'mfa.enrol.secret': 'Setup key',
  'mfa.enrol.code': 'Then enter the 6-digit code the app shows.',
  'mfa.codes.title': 'Save your recovery codes',
  'mfa.codes.intro':
    'Keep these codes somewhere safe. Each one works once if you lose your authenticator app. They are shown only now.',
  'mfa.codes.continue': 'I saved them, continue',
  'mfa.error.code': 'That code is wrong or expired. Try again.',
  'mfa.error.reused': 'That code was already used. Wait for the next one.',
  'mfa.error.rate': 'Too many attempts. Wait a moment and try again.',
  'mfa.error.locked': 'This account is locked. Try again later or ask your administrator.',
  'mfa.error.recovery': 'That recovery code is not right.',
  'mfa.error.otc': 'That code expired. Send a new one.',
  'mfa.error.inactive': 'This way of verifying is not available.',
  'mfa.error.enrolment': 'The setup expired. Start again.',
  'mfa.error.last': 'Your account requires two-step verification: add another method before removing this one.',
  'me.title': 'My account',
  'me.done.profile': 'Your profile was saved.',
  'me.done.password': 'Your password was changed. Your other sessions were signed out.',
  'me.done.session': 'The session was signed out.',
  'me.done.sessions': 'Your other sessions were signed out.',
  'me.done.mfa-added': 'The authenticator app was added.',
  'me.done.mfa-removed': 'The second factor was removed.',
  'me.done.confirmed': 'Thanks, your identity is confirmed.',
  'me.profile': 'Profile',
  'me.email': 'Email',
  'me.name': 'Name',
  'me.save': 'Save',
  'me.password': 'Password',
  'me.password.current': 'Current password',
  'me.password.new': 'New password',
  'me.password.submit': 'Change password',
  'me.password.wrong': 'The current password is not right.',
  'me.mfa': 'Two-step verification',
  'me.mfa.none': 'No second factor is set up.',
  'me.mfa.app': 'Authenticator app',
  'me.mfa.phone': 'Text messages to {phone}',
  'me.mfa.add': 'Add an authenticator app',
  'me.mfa.remove': 'Remove',
  'me.mfa.remove.app': 'To remove this authenticator app, enter a current code from it.',
  'me.mfa.remove.sms': 'Send a code to remove',
  'me.mfa.remove.sent': 'We texted a code to {phone}. Enter it to remove this phone.',
  'me.mfa.confirm': 'Confirm your password to change your second factors.',
  'me.confirm.submit': 'Confirm',
  'me.confirm.unavailable': 'Sign in again to change your second factors.',
  'me.passkeys': 'Passkeys',
  'me.sessions': 'Sessions',
  'me.sessions.current': 'This device',
  'me.sessions.seen': 'Last active {time} from {ip}',
  'me.sessions.revoke': 'Sign out',
  'me.sessions.revoke.label': 'Sign out the session on {device}',
  'me.sessions.others': 'Sign out all other sessions',
  'me.sessions.unknown': 'Unknown device',
  'me.back': 'Back to my account',
  'me.recent': 'For your security, confirm your password first.',
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
