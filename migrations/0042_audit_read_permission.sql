-- The audit log routes (GET /audits, /audits/stats, the exports) let a user token read its own account's records
-- with fe.secure.read.audits; the built-in catalogue seeds it so the Admin and ReadOnly roles hold it, as they hold
-- the other built-in read permissions. An environment that already created the key keeps its row.
INSERT INTO permissions (id, key, name, description, category_id, fe_permission)
  SELECT '3f0c2d7e-5b8a-4c51-9e0a-1d6f2b7c8a42'::uuid, 'fe.secure.read.audits', 'Read audit logs',
         'Read the audit records of the account',
         (SELECT id FROM permission_categories WHERE id = '8df9d228-9440-44ec-bbb8-2ba28121e0dd'), true
ON CONFLICT (key) DO NOTHING;
INSERT INTO role_permissions (role_id, permission_id)
  SELECT r.id, p.id FROM roles r, permissions p
   WHERE r.id IN ('bd3e633c-ebd7-4f44-8d87-7f05f9e34ac9', 'c784abeb-f295-45fb-84ed-19a1652cfb43')
     AND p.key = 'fe.secure.read.audits'
ON CONFLICT DO NOTHING;
