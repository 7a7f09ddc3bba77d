-- Captcha policy (routes.md "Core settings": /identity/resources/configurations/v1/captcha-policy): whether the public
-- sign-in, sign-up, passwordless, password-reset and activation routes require a reCAPTCHA token, the site key login
-- pages load, the secret key the server verifies tokens with (sealed with the KEK, never stored in clear), the lowest
-- accepted score and the emails exempt from the check. Environment-wide: at most one row (singleton = true).
CREATE TABLE captcha_policies (
  singleton       boolean PRIMARY KEY DEFAULT true CHECK (singleton),
  id              uuid NOT NULL UNIQUE,
  site_key        text NOT NULL,
  secret_key_enc  text NOT NULL,
  enabled         boolean NOT NULL,
  min_score       double precision NOT NULL CHECK (min_score >= 0 AND min_score <= 1),
  -- Lower-case exact addresses and `*@domain` patterns.
  ignored_emails  text[] NOT NULL DEFAULT '{}',
  created_at      timestamptz NOT NULL DEFAULT now(),
  updated_at      timestamptz NOT NULL DEFAULT now()
);
