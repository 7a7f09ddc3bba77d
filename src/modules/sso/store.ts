import type { Queryable } from '../../storage/db.ts';

export interface ConfigRow {
  tenant_id: string;
  id: string;
  type: 'saml' | 'oidc';
  enabled: boolean;
  sso_endpoint: string;
  idp_entity_id: string;
  idp_certs: string[];
  sign_request: boolean;
  sp_entity_id: string;
  oidc_issuer: string;
  oidc_client_id: string;
  oidc_secret_enc: string | null;
  oidc_scopes: string;
  group_attribute: string;
  default_role_ids: string[];
  config_metadata: Record<string, unknown>;
  created_at: Date;
  updated_at: Date;
}

export interface DomainRow {
  tenant_id: string;
  id: string;
  config_id: string;
  domain: string;
  txt_record: string;
  validated: boolean;
  validated_at: Date | null;
  created_at: Date;
}

export interface GroupRow {
  tenant_id: string;
  id: string;
  config_id: string;
  grp: string;
  role_ids: string[];
  created_at: Date;
}

export interface FlowStateRow {
  state_hash: string;
  kind: string;
  tenant_id: string | null;
  config_id: string | null;
  provider: string | null;
  request_id: string | null;
  nonce: string | null;
  verifier_enc: string | null;
  redirect_uri: string | null;
  app_redirect: string | null;
  expires_at: Date;
  used_at: Date | null;
}

const CONFIG_COLS = [
  'type',
  'enabled',
  'sso_endpoint',
  'idp_entity_id',
  'idp_certs',
  'sign_request',
  'sp_entity_id',
  'oidc_issuer',
  'oidc_client_id',
  'oidc_secret_enc',
  'oidc_scopes',
  'group_attribute',
  'default_role_ids',
  'config_metadata',
] as const;
type ConfigValues = Partial<Pick<ConfigRow, (typeof CONFIG_COLS)[number]>>;
const encode = (c: string, v: unknown) => (c === 'config_metadata' ? JSON.stringify(v) : v);

export async function insertConfig(q: Queryable, tenantId: string, id: string, v: ConfigValues): Promise<ConfigRow> {
  const cols = CONFIG_COLS.filter((c) => v[c] !== undefined);
  const { rows } = await q.query<ConfigRow>(
    `INSERT INTO sso_configurations (tenant_id, id${cols.map((c) => `, ${c}`).join('')}) VALUES ($1, $2${cols.map((_, i) => `, $${i + 3}`).join('')}) RETURNING *`,
    [tenantId, id, ...cols.map((c) => encode(c, v[c]))],
  );
  return rows[0];
}

export async function updateConfig(
  q: Queryable,
  tenantId: string,
  id: string,
  v: ConfigValues,
): Promise<ConfigRow | undefined> {
  const cols = CONFIG_COLS.filter((c) => v[c] !== undefined);
  const { rows } = await q.query<ConfigRow>(
    `UPDATE sso_configurations SET updated_at = now()${cols.map((c, i) => `, ${c} = $${i + 3}`).join('')} WHERE tenant_id = $1 AND id = $2 RETURNING *`,
    [tenantId, id, ...cols.map((c) => encode(c, v[c]))],
  );
  return rows[0];
}

export async function findConfig(q: Queryable, tenantId: string, id: string): Promise<ConfigRow | undefined> {
  const { rows } = await q.query<ConfigRow>('SELECT * FROM sso_configurations WHERE tenant_id = $1 AND id = $2', [
    tenantId,
    id,
  ]);
  return rows[0];
}

export async function listConfigs(q: Queryable, tenantId: string): Promise<ConfigRow[]> {
  return (
    await q.query<ConfigRow>('SELECT * FROM sso_configurations WHERE tenant_id = $1 ORDER BY created_at, id', [
      tenantId,
    ])
  ).rows;
}

export async function deleteConfig(q: Queryable, tenantId: string, id: string): Promise<boolean> {
  return (
    (await q.query('DELETE FROM sso_configurations WHERE tenant_id = $1 AND id = $2 RETURNING id', [tenantId, id])).rows
      .length > 0
  );
}

export async function forgetAccount(q: Queryable, tenantId: string): Promise<void> {
  await q.query('DELETE FROM sso_excluded_emails WHERE tenant_id = $1', [tenantId]);
  await q.query('DELETE FROM sso_configurations WHERE tenant_id = $1', [tenantId]);
}

// -- domains --
export async function insertDomain(
  q: Queryable,
  d: { tenantId: string; id: string; configId: string; domain: string; txt: string },
): Promise<DomainRow> {
  const { rows } = await q.query<DomainRow>(
    'INSERT INTO sso_domains (tenant_id, id, config_id, domain, txt_record) VALUES ($1, $2, $3, $4, $5) RETURNING *',
    [d.tenantId, d.id, d.configId, d.domain, d.txt],
  );
  return rows[0];
}
export async function domainsOf(q: Queryable, tenantId: string, configId: string): Promise<DomainRow[]> {
  return (
    await q.query<DomainRow>(
      'SELECT * FROM sso_domains WHERE tenant_id = $1 AND config_id = $2 ORDER BY created_at, id',
      [tenantId, configId],
    )
  ).rows;
}
export async function findDomain(
  q: Queryable,
  tenantId: string,
  configId: string,
  id: string,
): Promise<DomainRow | undefined> {
  return (
    await q.query<DomainRow>('SELECT * FROM sso_domains WHERE tenant_id = $1 AND config_id = $2 AND id = $3', [
      tenantId,
      configId,
      id,
    ])
  ).rows[0];
}
export async function deleteDomain(q: Queryable, tenantId: string, configId: string, id: string): Promise<boolean> {
  return (
    (
      await q.query('DELETE FROM sso_domains WHERE tenant_id = $1 AND config_id = $2 AND id = $3 RETURNING id', [
        tenantId,
        configId,
        id,
      ])
    ).rows.length > 0
  );
}
export async function markValidated(q: Queryable, tenantId: string, id: string): Promise<void> {
  await q.query('UPDATE sso_domains SET validated = true, validated_at = now() WHERE tenant_id = $1 AND id = $2', [
    tenantId,
    id,
  ]);
}
/** The validated domain's configuration (any account): pre-login routing. */
export async function routeDomain(
  q: Queryable,
  domain: string,
): Promise<(ConfigRow & { domain_id: string }) | undefined> {
  const { rows } = await q.query<ConfigRow & { domain_id: string }>(
    `SELECT c.*, d.id AS domain_id FROM sso_domains d JOIN sso_configurations c ON c.tenant_id = d.tenant_id AND c.id = d.config_id
     WHERE d.domain = $1 AND d.validated AND c.enabled LIMIT 1`,
    [domain],
  );
  return rows[0];
}
export async function validatedElsewhere(q: Queryable, domain: string, tenantId: string): Promise<boolean> {
  return (
    (await q.query('SELECT 1 FROM sso_domains WHERE domain = $1 AND validated AND tenant_id <> $2', [domain, tenantId]))
      .rows.length > 0
  );
}
export async function domainByName(q: Queryable, domain: string): Promise<DomainRow[]> {
  return (await q.query<DomainRow>('SELECT * FROM sso_domains WHERE domain = $1 ORDER BY created_at', [domain])).rows;
}

// -- groups --
export async function insertGroup(
  q: Queryable,
  g: { tenantId: string; id: string; configId: string; group: string; roleIds: string[] },
): Promise<GroupRow> {
  return (
    await q.query<GroupRow>(
      'INSERT INTO sso_groups (tenant_id, id, config_id, grp, role_ids) VALUES ($1, $2, $3, $4, $5) RETURNING *',
      [g.tenantId, g.id, g.configId, g.group, g.roleIds],
    )
  ).rows[0];
}
export async function updateGroup(
  q: Queryable,
  tenantId: string,
  configId: string,
  id: string,
  group: string,
  roleIds: string[],
): Promise<GroupRow | undefined> {
  return (
    await q.query<GroupRow>(
      'UPDATE sso_groups SET grp = $4, role_ids = $5 WHERE tenant_id = $1 AND config_id = $2 AND id = $3 RETURNING *',
      [tenantId, configId, id, group, roleIds],
    )
  ).rows[0];
}
export async function groupsOf(q: Queryable, tenantId: string, configId: string): Promise<GroupRow[]> {
  return (
    await q.query<GroupRow>(
      'SELECT * FROM sso_groups WHERE tenant_id = $1 AND config_id = $2 ORDER BY created_at, id',
      [tenantId, configId],
    )
  ).rows;
}
export async function deleteGroup(q: Queryable, tenantId: string, configId: string, id: string): Promise<boolean> {
  return (
    (
      await q.query('DELETE FROM sso_groups WHERE tenant_id = $1 AND config_id = $2 AND id = $3 RETURNING id', [
        tenantId,
        configId,
        id,
      ])
    ).rows.length > 0
  );
}

// -- excluded emails --
export async function excludeEmail(q: Queryable, tenantId: string, email: string): Promise<void> {
  await q.query('INSERT INTO sso_excluded_emails (tenant_id, email) VALUES ($1, $2) ON CONFLICT DO NOTHING', [
    tenantId,
    email,
  ]);
}
export async function excludedEmails(q: Queryable, tenantId: string): Promise<string[]> {
  return (
    await q.query<{ email: string }>('SELECT email FROM sso_excluded_emails WHERE tenant_id = $1 ORDER BY email', [
      tenantId,
    ])
  ).rows.map((r) => r.email);
}
export async function unexcludeEmail(q: Queryable, tenantId: string, email: string): Promise<boolean> {
  return (
    (
      await q.query('DELETE FROM sso_excluded_emails WHERE tenant_id = $1 AND email = $2 RETURNING email', [
        tenantId,
        email,
      ])
    ).rows.length > 0
  );
}
export async function isExcluded(q: Queryable, tenantId: string, email: string): Promise<boolean> {
  return (
    (await q.query('SELECT 1 FROM sso_excluded_emails WHERE tenant_id = $1 AND email = $2', [tenantId, email])).rows
      .length > 0
  );
}

// -- flow states and replay --
export async function insertState(q: Queryable, s: Omit<FlowStateRow, 'used_at'>): Promise<void> {
  await q.query(
    `INSERT INTO sso_flow_states (state_hash, kind, tenant_id, config_id, provider, request_id, nonce, verifier_enc, redirect_uri, app_redirect, expires_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)`,
    [
      s.state_hash,
      s.kind,
      s.tenant_id,
      s.config_id,
      s.provider,
      s.request_id,
      s.nonce,
      s.verifier_enc,
      s.redirect_uri,
      s.app_redirect,
      s.expires_at,
    ],
  );
}
/** Marks the state used and answers it, or nothing when unknown, used or expired (one statement: single use under races). */
export async function consumeState(q: Queryable, stateHash: string, kind: string): Promise<FlowStateRow | undefined> {
  const { rows } = await q.query<FlowStateRow>(
    'UPDATE sso_flow_states SET used_at = now() WHERE state_hash = $1 AND kind = $2 AND used_at IS NULL AND expires_at > now() RETURNING *',
    [stateHash, kind],
  );
  return rows[0];
}
export async function peekState(q: Queryable, stateHash: string): Promise<FlowStateRow | undefined> {
  return (await q.query<FlowStateRow>('SELECT * FROM sso_flow_states WHERE state_hash = $1', [stateHash])).rows[0];
}
export async function assertionSeen(q: Queryable, id: string): Promise<boolean> {
  return (
    (await q.query('SELECT 1 FROM sso_assertions WHERE assertion_id = $1 AND expires_at > now()', [id])).rows.length > 0
  );
}
/** Records an assertion id; false when it was seen before (a replay). */
export async function rememberAssertion(q: Queryable, id: string, tenantId: string, expiresAt: Date): Promise<boolean> {
  await q.query('DELETE FROM sso_assertions WHERE assertion_id = $1 AND expires_at < now()', [id]);
  const { rows } = await q.query(
    'INSERT INTO sso_assertions (assertion_id, tenant_id, expires_at) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING RETURNING assertion_id',
    [id, tenantId, expiresAt],
  );
  return rows.length > 0;
}

// -- SP key and settings --
export async function spKey(q: Queryable): Promise<{ private_key_enc: string; certificate: string } | undefined> {
  return (
    await q.query<{ private_key_enc: string; certificate: string }>(
      'SELECT private_key_enc, certificate FROM sso_sp_keys WHERE id = 1',
    )
  ).rows[0];
}
export async function insertSpKey(q: Queryable, privateKeyEnc: string, certificate: string): Promise<void> {
  await q.query(
    'INSERT INTO sso_sp_keys (id, private_key_enc, certificate) VALUES (1, $1, $2) ON CONFLICT (id) DO NOTHING',
    [privateKeyEnc, certificate],
  );
}
export async function readSettings(q: Queryable): Promise<Record<string, unknown>> {
  return (
    (await q.query<{ settings: Record<string, unknown> }>('SELECT settings FROM sso_settings WHERE id = 1')).rows[0]
      ?.settings ?? {}
  );
}
export async function mergeSettings(q: Queryable, patch: Record<string, unknown>): Promise<void> {
  await q.query(
    `INSERT INTO sso_settings (id, settings) VALUES (1, $1::jsonb) ON CONFLICT (id) DO UPDATE SET settings = sso_settings.settings || EXCLUDED.settings`,
    [JSON.stringify(patch)],
  );
}
