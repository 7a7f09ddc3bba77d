-- Applications (routes.md "Applications Settings"): how accounts get access, a logo, the kind of application and its
-- frontend stack. Existing rows take the defaults: free access, no logo, a web application, stack not stated.
-- `app_type` and `frontend_stack` are checked by the route schemas (their lists may grow without a migration);
-- the access type is a closed pair.
ALTER TABLE applications ADD COLUMN access_type text NOT NULL DEFAULT 'FREE_ACCESS' CHECK (access_type IN ('FREE_ACCESS', 'MANAGED_ACCESS'));
ALTER TABLE applications ADD COLUMN logo_url text NOT NULL DEFAULT '';
ALTER TABLE applications ADD COLUMN app_type text NOT NULL DEFAULT 'web';
ALTER TABLE applications ADD COLUMN frontend_stack text;
