// What other modules' statements may read of the delivery setup, as SQL expressions (the login box composes them
// into its one statement): on/off facts and template types only, never a provider secret.

export const deliveryFactsSql = {
  /** Whether an email provider is configured (boolean). */
  mailConfigured: 'EXISTS (SELECT 1 FROM mail_configurations)',
  /** Whether an SMS provider is configured (boolean). */
  smsConfigured: 'EXISTS (SELECT 1 FROM sms_configurations)',
  /** The types of the email templates switched off, sorted (text[], empty when none). */
  inactiveEmailTemplates: `coalesce((SELECT array_agg(type ORDER BY type) FROM email_templates WHERE NOT active),
    '{}'::text[])`,
  /** The types of the SMS templates switched off, sorted (text[], empty when none). */
  inactiveSmsTemplates: `coalesce((SELECT array_agg(type ORDER BY type) FROM sms_templates WHERE NOT active),
    '{}'::text[])`,
} as const;
