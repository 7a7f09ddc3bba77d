// What other modules' statements may read of the MFA configuration, as SQL expressions.

/** Which second factors the environment offers (booleans; the defaults apply while nothing is configured). */
export const MFA_FACTORS_SQL = {
  authenticator: 'coalesce((SELECT authenticator_active FROM mfa_config WHERE id), true)',
  sms: 'coalesce((SELECT sms_active FROM mfa_config WHERE id), true)',
  email: 'coalesce((SELECT email_active FROM mfa_config WHERE id), false)',
};
