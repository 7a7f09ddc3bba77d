import { importerFor } from '../src/modules/credentials/index.ts';
import type { Db } from '../src/storage/db.ts';
import { bulkUser } from './migration-bulk.ts';
import type { Sizes } from './migration-config.ts';

// ---------------------------------------------------------------------------------------------------------------
// Raw insert rate: the same rows straight into the tables, one multi-row INSERT per table per 1000 users

export async function measureRawInsert(db: Db, sizes: Sizes, accounts: string[], log: (l: string) => void) {
  const prefix = `r${Date.now().toString(36)}`;
  const roleIds = new Map<string, string[]>();
  for (const a of accounts) {
    const { rows } = await db.query<{ id: string }>(
      `SELECT id::text FROM roles WHERE (tenant_id IS NULL OR tenant_id = $1) AND is_default`,
      [a],
    );
    roleIds.set(
      a,
      rows.map((r) => r.id),
    );
  }
  const apps = (
    await db.query<{ id: string }>('SELECT id::text FROM applications WHERE is_active AND (is_default OR auto_assign)')
  ).rows.map((r) => r.id);
  const total = sizes.requests * sizes.perRequest;
  const start = performance.now();
  for (let r = 0; r < sizes.requests; r++) {
    const users = Array.from({ length: sizes.perRequest }, (_, i) => {
      const n = r * sizes.perRequest + i;
      const u = bulkUser(prefix, n, accounts, 3_000_000_000);
      const stored =
        typeof u.passwordHash === 'string'
          ? importerFor(String(u.passwordHashType))!.imports!.store(
              u.passwordHash,
              u.passwordHashConfig ? JSON.parse(String(u.passwordHashConfig)) : undefined,
            )
          : null;
      return {
        id: crypto.randomUUID(),
        email: String(u.email),
        name: String(u.name),
        verified: u.verifyUser === true,
        metadata: u.metadata ? JSON.parse(String(u.metadata)) : {},
        password_hash: stored,
        must_reset_password: stored === null,
        tenant_id: String(u.tenantId),
        phone: (u.phoneNumber as string | undefined) ?? null,
      };
    });
    await db.transaction(async (tx) => {
      await tx.query(
        `INSERT INTO users (id, email, name, verified, provider, metadata, vendor_metadata, password_hash, must_reset_password, active_tenant_id)
         SELECT id, email, name, verified, 'local', metadata, '{}'::jsonb, password_hash, must_reset_password, tenant_id
         FROM jsonb_to_recordset($1::jsonb) AS x(id uuid, email text, name text, verified boolean, metadata jsonb, password_hash text, must_reset_password boolean, tenant_id text)`,
        [JSON.stringify(users)],
      );
      const pairs = JSON.stringify(users.map((u) => ({ t: u.tenant_id, u: u.id })));
      await tx.query(
        `INSERT INTO user_tenants (tenant_id, user_id, sub_account_access_allowed) SELECT t, u, true FROM jsonb_to_recordset($1::jsonb) AS x(t text, u uuid)`,
        [pairs],
      );
      await tx.query(
        `INSERT INTO user_roles (tenant_id, user_id, role_id) SELECT t, u, r FROM jsonb_to_recordset($1::jsonb) AS x(t text, u uuid, r uuid)`,
        [
          JSON.stringify(
            users.flatMap((u) => roleIds.get(u.tenant_id)!.map((rid) => ({ t: u.tenant_id, u: u.id, r: rid }))),
          ),
        ],
      );
      await tx.query(
        `INSERT INTO user_applications (app_id, tenant_id, user_id) SELECT a, t, u FROM jsonb_to_recordset($1::jsonb) AS x(t text, u uuid), unnest($2::uuid[]) AS a`,
        [pairs, apps],
      );
      const phones = users.filter((u) => u.phone);
      if (phones.length) {
        await tx.query(
          `INSERT INTO user_phone_numbers (phone_number, user_id, is_primary) SELECT p, u, true FROM jsonb_to_recordset($1::jsonb) AS x(p text, u uuid)`,
          [JSON.stringify(phones.map((u) => ({ p: u.phone, u: u.id })))],
        );
      }
    });
  }
  const elapsed = performance.now() - start;
  const result = {
    users: total,
    transactions: sizes.requests,
    usersPerTransaction: sizes.perRequest,
    ms: elapsed,
    usersPerSecond: total / (elapsed / 1000),
    defaultRoles: [...roleIds.values()][0]?.length ?? 0,
    applications: apps.length,
  };
  log(
    `    raw insert: ${total} users in ${(elapsed / 1000).toFixed(2)} s: ${result.usersPerSecond.toFixed(0)} users/s`,
  );
  return result;
}
