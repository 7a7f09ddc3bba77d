-- Roles and permissions. Permissions (and their categories) are environment-wide; a role is an environment role
-- (tenant_id NULL, offered to every account) or an account role (tenant_id set). Keys and names sort in "C" order so
-- PGlite and a PostgreSQL server order identically.
CREATE TABLE permission_categories (
  id           uuid PRIMARY KEY,
  name         text NOT NULL,
  description  text NOT NULL DEFAULT '',
  fe_category  boolean NOT NULL DEFAULT false,
  created_at   timestamptz NOT NULL DEFAULT now(),
  updated_at   timestamptz NOT NULL DEFAULT now()
);
-- Category names are unique case-insensitively.
CREATE UNIQUE INDEX permission_categories_name ON permission_categories ((lower(name) COLLATE "C"));

CREATE TABLE permissions (
  id               uuid PRIMARY KEY,
  key              text COLLATE "C" NOT NULL UNIQUE,
  name             text NOT NULL,
  description      text NOT NULL DEFAULT '',
  category_id      uuid REFERENCES permission_categories (id) ON DELETE SET NULL,
  assignment_type  text NOT NULL DEFAULT 'ASSIGNABLE' CHECK (assignment_type IN ('NEVER', 'ALWAYS', 'ASSIGNABLE')),
  fe_permission    boolean NOT NULL DEFAULT false,
  created_at       timestamptz NOT NULL DEFAULT now(),
  updated_at       timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX permissions_category ON permissions (category_id) WHERE category_id IS NOT NULL;

CREATE TABLE roles (
  id               uuid PRIMARY KEY,
  tenant_id        text COLLATE "C" REFERENCES tenants (tenant_id),
  key              text COLLATE "C" NOT NULL,
  name             text NOT NULL,
  description      text NOT NULL DEFAULT '',
  is_default       boolean NOT NULL DEFAULT false,
  first_user_role  boolean NOT NULL DEFAULT false,
  level            integer NOT NULL DEFAULT 0 CHECK (level >= 0),
  created_at       timestamptz NOT NULL DEFAULT now(),
  updated_at       timestamptz NOT NULL DEFAULT now()
);
-- A key is unique within its scope: the environment ('') or one account.
CREATE UNIQUE INDEX roles_scope_key ON roles ((coalesce(tenant_id, '')), key);
-- Roles of one scope in list order (environment roles: tenant_id IS NULL).
CREATE INDEX roles_by_tenant ON roles (tenant_id, level, key);

CREATE TABLE role_permissions (
  role_id        uuid NOT NULL REFERENCES roles (id) ON DELETE CASCADE,
  permission_id  uuid NOT NULL REFERENCES permissions (id) ON DELETE CASCADE,
  PRIMARY KEY (role_id, permission_id)
);
-- Which roles hold a permission.
CREATE INDEX role_permissions_by_permission ON role_permissions (permission_id, role_id);

-- Built-in: the permissions the platform itself checks, in the category "Gatehouse", and two environment roles.
INSERT INTO permission_categories (id, name, description, fe_category) VALUES
  ('8df9d228-9440-44ec-bbb8-2ba28121e0dd', 'Gatehouse', 'Permissions that Gatehouse itself checks', true);

INSERT INTO permissions (id, key, name, description, category_id, fe_permission) VALUES
  ('595dc101-7335-41cd-aa98-3c0f76d2e5be', 'fe.account-settings.read', 'Read account settings', 'Read the settings of the account', '8df9d228-9440-44ec-bbb8-2ba28121e0dd', true),
  ('25697b62-819d-4909-92bc-139bd362f6ed', 'fe.account-settings.write', 'Edit account settings', 'Change the settings of the account', '8df9d228-9440-44ec-bbb8-2ba28121e0dd', true),
  ('910e1751-5c8e-453b-8b20-a3244536c208', 'fe.account-settings.delete.account', 'Delete account', 'Remove the account and its users', '8df9d228-9440-44ec-bbb8-2ba28121e0dd', true),
  ('81194ae5-34a8-405b-a68c-392d4bf4d226', 'fe.account-hierarchy.read.subaccount', 'Read sub-accounts', 'Read the sub-accounts of the account', '8df9d228-9440-44ec-bbb8-2ba28121e0dd', true),
  ('0eda9109-fa9e-4fc4-aea0-dd3786bc39f9', 'fe.account-hierarchy.write.subaccount', 'Manage sub-accounts', 'Create, change and remove sub-accounts', '8df9d228-9440-44ec-bbb8-2ba28121e0dd', true),
  ('cd9ae0f8-42e4-40f2-bdab-083a874f3720', 'fe.secure.read.users', 'Read users', 'Read the users of the account', '8df9d228-9440-44ec-bbb8-2ba28121e0dd', true),
  ('375971fd-bf45-459a-a94d-38c7409d0b93', 'fe.secure.write.users', 'Edit users', 'Invite and change the users of the account', '8df9d228-9440-44ec-bbb8-2ba28121e0dd', true),
  ('8a34305e-3a7d-4694-91e1-e480878c1195', 'fe.secure.delete.users', 'Remove users', 'Remove users from the account', '8df9d228-9440-44ec-bbb8-2ba28121e0dd', true),
  ('c77f0dfa-ba19-4396-97f4-722796ea3784', 'fe.secure.read.roles', 'Read roles', 'Read the roles and permissions of the account', '8df9d228-9440-44ec-bbb8-2ba28121e0dd', true),
  ('b9ab741e-73a5-4018-9238-d8ca4a495e52', 'fe.secure.write.roles', 'Edit roles', 'Create roles of the account', '8df9d228-9440-44ec-bbb8-2ba28121e0dd', true),
  ('5e554e0b-e415-40f1-8d28-8061804b9e33', 'fe.secure.read.sessions', 'Read sessions', 'Read the sessions of the account''s users', '8df9d228-9440-44ec-bbb8-2ba28121e0dd', true),
  ('b6cf2ac9-c05b-4073-829a-5a801d182fe3', 'fe.secure.delete.sessions', 'Revoke sessions', 'Revoke sessions of the account''s users', '8df9d228-9440-44ec-bbb8-2ba28121e0dd', true),
  ('dbe5f292-a244-43d1-97de-f9916fcb8a17', 'fe.secure.read.securityPolicy', 'Read security policy', 'Read the security policies of the account', '8df9d228-9440-44ec-bbb8-2ba28121e0dd', true),
  ('84287b59-26ea-4cfd-bc38-1c799d662fab', 'fe.secure.write.securityPolicy', 'Edit security policy', 'Change the security policies of the account', '8df9d228-9440-44ec-bbb8-2ba28121e0dd', true);

INSERT INTO roles (id, tenant_id, key, name, description, is_default, first_user_role, level) VALUES
  ('bd3e633c-ebd7-4f44-8d87-7f05f9e34ac9', NULL, 'admin', 'Admin', 'Full control of the account', false, true, 0),
  ('c784abeb-f295-45fb-84ed-19a1652cfb43', NULL, 'read-only', 'ReadOnly', 'Read access to the account', true, false, 1);

INSERT INTO role_permissions (role_id, permission_id)
  SELECT 'bd3e633c-ebd7-4f44-8d87-7f05f9e34ac9'::uuid, id FROM permissions WHERE fe_permission AND key LIKE 'fe.%';
INSERT INTO role_permissions (role_id, permission_id)
  SELECT 'c784abeb-f295-45fb-84ed-19a1652cfb43'::uuid, id FROM permissions WHERE fe_permission AND key LIKE '%.read%';
