-- JWT templates (claims and lifetime of user access tokens) and the environment's targeting rules choosing one.

CREATE TABLE jwt_templates (
  id           uuid PRIMARY KEY,
  key          text NOT NULL UNIQUE,
  name         text NOT NULL,
  description  text NOT NULL DEFAULT '',
  expiration   integer NOT NULL CHECK (expiration > 0),
  algorithm    text NOT NULL CHECK (algorithm IN ('RS256', 'HS256')),
  -- The template's claims as given: constants and "{{reference}}" strings (rendered at token issue).
  claims       jsonb NOT NULL DEFAULT '{}'::jsonb,
  created_at   timestamptz NOT NULL DEFAULT now(),
  updated_at   timestamptz NOT NULL DEFAULT now()
);

-- One targeting configuration per environment: rules [{conditionLogic, conditions, treatment: template key}].
CREATE TABLE jwt_template_targeting (
  singleton   boolean PRIMARY KEY DEFAULT true CHECK (singleton),
  id          uuid NOT NULL UNIQUE,
  rules       jsonb NOT NULL DEFAULT '[]'::jsonb,
  created_at  timestamptz NOT NULL DEFAULT now(),
  updated_at  timestamptz NOT NULL DEFAULT now()
);
