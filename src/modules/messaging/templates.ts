/**
 * Message types, their built-in default templates, and rendering. Templates use `{{var}}` (whitespace allowed inside
 * the braces) and `{{#var}}...{{/var}}` sections that render only when `var` is non-empty. In email HTML every value
 * is HTML-escaped; subjects and SMS bodies are plain text.
 */

export const EMAIL_TEMPLATE_TYPES = [
  'ResetPassword',
  'ActivateUser',
  'InviteToTenant',
  'PwnedPassword',
  'MagicLink',
  'OTC',
  'ConnectNewDevice',
  'UserUsedInvitation',
  'ResetPhoneNumber',
  'BulkInvitesToTenant',
  'MFAEnroll',
  'MFAUnenroll',
  'NewMFAMethod',
  'MFARecoveryCode',
  'RemoveMFAMethod',
  'EmailVerification',
  'BruteForceProtection',
  'SuspiciousIP',
  'MFAOTC',
  'ImpossibleTravel',
  'BotDetection',
  'SmsAuthenticationEnabled',
] as const;
export type EmailTemplateType = (typeof EMAIL_TEMPLATE_TYPES)[number];

export const SMS_TEMPLATE_TYPES = ['ResetPassword', 'OTC', 'MFAOTC', 'VerifyPhoneNumber', 'ResetPhoneNumber'] as const;
export type SmsTemplateType = (typeof SMS_TEMPLATE_TYPES)[number];

export const isEmailType = (t: string): t is EmailTemplateType =>
  (EMAIL_TEMPLATE_TYPES as readonly string[]).includes(t);
export const isSmsType = (t: string): t is SmsTemplateType => (SMS_TEMPLATE_TYPES as readonly string[]).includes(t);

/** Where the `{{link}}` of a type points when its template sets no redirectURL (appended to PUBLIC_URL). */
const DEFAULT_LINK_PATHS: Partial<Record<EmailTemplateType, string>> = {
  ResetPassword: '/account/reset-password',
  PwnedPassword: '/account/reset-password',
  ActivateUser: '/account/activate',
  InviteToTenant: '/account/invitation/accept',
  BulkInvitesToTenant: '/account/invitation/accept',
  MagicLink: '/account/login/magic-link',
  ResetPhoneNumber: '/account/reset-phone-number',
  EmailVerification: '/account/verify-email',
  BruteForceProtection: '/account/unlock',
};
export const defaultLinkPath = (type: EmailTemplateType): string => DEFAULT_LINK_PATHS[type] ?? '/account/login';

const p = (s: string) => `<p>${s}</p>`;
const hello = p('Hello{{#name}} {{name}}{{/name}},');
const ignore = p('If you did not ask for this, you can ignore this email.');
const linkButton = (label: string) => p(`<a href="{{link}}">${label}</a>`) + p('Or open this address: {{link}}');
const codeLine = (label: string) => p(`${label}: <strong>{{code}}</strong>`);
const alert = (what: string) =>
  hello +
  p(what) +
  p('{{#ip}}IP address: {{ip}}. {{/ip}}{{#userAgent}}Device: {{userAgent}}.{{/userAgent}}') +
  p('If this was not you, reset your password and contact your administrator.');

/** The built-in subject and HTML of every email type. Variables are documented in docs (notes) per type. */
export const DEFAULT_EMAIL_TEMPLATES: Record<EmailTemplateType, { subject: string; html: string }> = {
  ResetPassword: {
    subject: 'Reset your password',
    html:
      hello +
      p('We received a request to reset your password.') +
      linkButton('Reset your password') +
      p(
        '{{#expiresInMinutes}}The link is valid for {{expiresInMinutes}} minutes and {{/expiresInMinutes}}works once.',
      ) +
      ignore,
  },
  ActivateUser: {
    subject: 'Activate your account',
    html:
      hello +
      p('Your account is ready. Activate it to sign in.') +
      linkButton('Activate your account') +
      '{{#code}}' +
      codeLine('Or enter the activation code') +
      '{{/code}}',
  },
  InviteToTenant: {
    subject: "You're invited{{#tenantName}} to {{tenantName}}{{/tenantName}}",
    html:
      hello +
      p(
        '{{#inviterName}}{{inviterName}} has invited you{{/inviterName}}{{^inviterName}}You have been invited{{/inviterName}}{{#tenantName}} to join {{tenantName}}{{/tenantName}}.',
      ) +
      linkButton('Accept the invitation') +
      '{{#code}}' +
      codeLine('Or enter the invitation code') +
      '{{/code}}',
  },
  BulkInvitesToTenant: {
    subject: "You're invited{{#tenantName}} to {{tenantName}}{{/tenantName}}",
    html:
      hello +
      p('You have been invited{{#tenantName}} to join {{tenantName}}{{/tenantName}}.') +
      linkButton('Accept the invitation'),
  },
  PwnedPassword: {
    subject: 'Your password must be changed',
    html:
      hello +
      p('Your password appeared in a known data breach, so it can no longer be used.') +
      linkButton('Choose a new password'),
  },
  MagicLink: {
    subject: 'Your sign-in link',
    html:
      hello +
      p(
        'Use this link to sign in. It works once{{#expiresInMinutes}} and expires in {{expiresInMinutes}} minutes{{/expiresInMinutes}}.',
      ) +
      linkButton('Sign in') +
      ignore,
  },
  OTC: {
    subject: 'Your sign-in code: {{code}}',
    html:
      hello +
      codeLine('Your one-time sign-in code') +
      p('{{#expiresInMinutes}}It expires in {{expiresInMinutes}} minutes and {{/expiresInMinutes}}works once.') +
      ignore,
  },
  MFAOTC: {
    subject: 'Your verification code: {{code}}',
    html:
      hello +
      codeLine('Your verification code') +
      p('{{#expiresInMinutes}}It expires in {{expiresInMinutes}} minutes and {{/expiresInMinutes}}works once.') +
      ignore,
  },
  EmailVerification: {
    subject: 'Verify your email address',
    html:
      hello +
      p('Please confirm that {{email}} is your email address.') +
      '{{#link}}' +
      linkButton('Verify your email') +
      '{{/link}}' +
      '{{#code}}' +
      codeLine('Your verification code') +
      '{{/code}}' +
      ignore,
  },
  ConnectNewDevice: {
    subject: 'New sign-in to your account',
    html: alert('Your account was just used to sign in from a new device.'),
  },
  UserUsedInvitation: {
    subject: '{{inviteeEmail}} accepted your invitation',
    html: hello + p('{{inviteeEmail}} accepted the invitation{{#tenantName}} to {{tenantName}}{{/tenantName}}.'),
  },
  ResetPhoneNumber: {
    subject: 'Reset your phone number',
    html:
      hello +
      p('We received a request to change the phone number of your account.') +
      linkButton('Reset your phone number') +
      '{{#code}}' +
      codeLine('Or enter the code') +
      '{{/code}}' +
      ignore,
  },
  MFAEnroll: {
    subject: 'Two-factor authentication is on',
    html: hello + p('Two-factor authentication was turned on for your account.'),
  },
  MFAUnenroll: {
    subject: 'Two-factor authentication is off',
    html:
      hello +
      p('Two-factor authentication was turned off for your account.') +
      p('If this was not you, contact your administrator.'),
  },
  NewMFAMethod: {
    subject: 'A new sign-in method was added',
    html: hello + p('A new second-factor method{{#method}} ({{method}}){{/method}} was added to your account.'),
  },
  RemoveMFAMethod: {
    subject: 'A sign-in method was removed',
    html: hello + p('A second-factor method{{#method}} ({{method}}){{/method}} was removed from your account.'),
  },
  MFARecoveryCode: {
    subject: 'Your recovery code',
    html:
      hello +
      codeLine('Your two-factor recovery code') +
      p('Keep it safe: it lets you sign in without your second factor, once.'),
  },
  BruteForceProtection: {
    subject: 'Your account was locked',
    html:
      alert('Your account was locked after too many failed sign-in attempts.') +
      '{{#link}}' +
      linkButton('Unlock your account') +
      p('The link works once{{#expiresInMinutes}} within {{expiresInMinutes}} minutes{{/expiresInMinutes}}.') +
      '{{/link}}',
  },
  SuspiciousIP: {
    subject: 'Sign-in from an unusual address',
    html: alert('Your account was used from an unusual IP address.'),
  },
  ImpossibleTravel: {
    subject: 'Unusual sign-in location',
    html: alert('Your account was used from a location far from your previous sign-in.'),
  },
  BotDetection: {
    subject: 'Automated sign-in attempt blocked',
    html: alert('A sign-in to your account looked automated and was blocked.'),
  },
  SmsAuthenticationEnabled: {
    subject: 'SMS sign-in is on',
    html: hello + p('Sign-in by SMS code was turned on for your account.'),
  },
};

/** The built-in body of every SMS type. */
export const DEFAULT_SMS_TEMPLATES: Record<SmsTemplateType, string> = {
  ResetPassword:
    'Your password reset code is {{code}}.{{#expiresInMinutes}} It expires in {{expiresInMinutes}} minutes.{{/expiresInMinutes}}',
  OTC: 'Your sign-in code is {{code}}.{{#expiresInMinutes}} It expires in {{expiresInMinutes}} minutes.{{/expiresInMinutes}}',
  MFAOTC:
    'Your verification code is {{code}}.{{#expiresInMinutes}} It expires in {{expiresInMinutes}} minutes.{{/expiresInMinutes}}',
  VerifyPhoneNumber: 'Your phone verification code is {{code}}.',
  ResetPhoneNumber: 'Your code to change your phone number is {{code}}.',
};

const ESC: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };
export const escapeHtml = (s: string): string => s.replace(/[&<>"']/g, (c) => ESC[c]);

/** Substitutes variables; `escape` is applied to every value (not to the template). Unknown variables render empty. */
export function render(
  template: string,
  vars: Record<string, string>,
  escape: (s: string) => string = (s) => s,
): string {
  const value = (k: string) => vars[k] ?? '';
  let out = template.replace(/\{\{#\s*([\w.-]+)\s*\}\}([\s\S]*?)\{\{\/\s*\1\s*\}\}/g, (_, k: string, inner: string) =>
    value(k) ? inner : '',
  );
  out = out.replace(/\{\{\^\s*([\w.-]+)\s*\}\}([\s\S]*?)\{\{\/\s*\1\s*\}\}/g, (_, k: string, inner: string) =>
    value(k) ? '' : inner,
  );
  return out.replace(/\{\{\s*([\w.-]+)\s*\}\}/g, (_, k: string) => escape(value(k)));
}

const ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', '#39': "'", apos: "'", nbsp: ' ' };

/** A plain-text alternative of rendered HTML: links as "label (url)" unless the label is the url, tags dropped. */
export function htmlToText(html: string): string {
  return html
    .replace(/<a\s[^>]*href="([^"]*)"[^>]*>([\s\S]*?)<\/a>/gi, (_, href: string, label: string) => {
      const l = label.replace(/<[^>]+>/g, '').trim();
      return l && l !== href ? `${l} (${href})` : href;
    })
    .replace(/<br\s*\/?>/gi, '\n')
    .replace(/<\/(p|div|h[1-6]|li|tr)>/gi, '\n')
    .replace(/<[^>]+>/g, '')
    .replace(/&(amp|lt|gt|quot|#39|apos|nbsp);/g, (_, e: string) => ENTITIES[e])
    .replace(/[ \t]+\n/g, '\n')
    .replace(/\n{3,}/g, '\n\n')
    .trim();
}

/** A header-safe single line (subjects, names). */
export const oneLine = (s: string): string => s.replace(/[\r\n]+/g, ' ').trim();
