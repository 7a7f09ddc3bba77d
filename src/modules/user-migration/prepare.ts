import { Compile } from 'typebox/compile';
import { AppError } from '../../http/errors.ts';
import { encrypt } from '../../lib/crypto.ts';
import { hasherFor, importerFor } from '../credentials/index.ts';
import { parseMetadata } from '../tenants/index.ts';
import { MigrateUserBody } from './schema.ts';

/** The rules of a migrate-user body that need no database, shared by the single and the bulk path. */

/** A checked migration body, ready to write. */
export interface Prepared {
  body: MigrateUserBody;
  email: string;
  passwordHash: string | null;
  metadata: Record<string, unknown>;
  vendorMetadata: Record<string, unknown>;
  providerRoleKeys?: string[];
}

/** The bulk items are loose objects in the request: each is checked with this compiled validator by the job. */
export const checkBody = Compile(MigrateUserBody);

function hashConfig(body: MigrateUserBody): Record<string, unknown> | undefined {
  if (body.passwordHashConfig === undefined || body.passwordHashConfig.trim() === '') return undefined;
  let v: unknown;
  try {
    v = JSON.parse(body.passwordHashConfig);
  } catch {
    throw new AppError('HASH_CONFIG_INVALID', 'passwordHashConfig must be a stringified JSON object; it is not valid JSON');
  }
  if (v === null || typeof v !== 'object' || Array.isArray(v)) throw new AppError('HASH_CONFIG_INVALID', 'passwordHashConfig must be a stringified JSON object');
  return v as Record<string, unknown>;
}

/**
 * The stored hash for the body (wire.md section 8), or null when the user must set a password: no hash, or a hash
 * without passwordHashType that does not describe itself (interface rule 3: the user is prompted to reset).
 */
function importedHash(body: MigrateUserBody): string | null {
  if (body.passwordHash === undefined) {
    if (body.passwordHashType !== undefined) throw new AppError('VALIDATION', 'passwordHash is required with passwordHashType');
    return null;
  }
  if (body.passwordHashType === undefined) {
    const self = hasherFor(body.passwordHash);
    return self && (self.id === 'bcrypt' || self.id === 'argon2') && !self.imports!.check(undefined, body.passwordHash) ? body.passwordHash : null;
  }
  const hasher = importerFor(body.passwordHashType)!;
  const spec = hasher.imports!;
  const config = hashConfig(body);
  const missing = spec.required.find((k) => config?.[k] === undefined);
  if (missing) throw new AppError('HASH_CONFIG_INVALID', `passwordHashConfig must hold ${missing} for passwordHashType ${spec.type} (keys: ${spec.required.join(', ')})`);
  const problem = spec.check(config, body.passwordHash);
  if (problem) throw new AppError('HASH_CONFIG_INVALID', `${problem} (passwordHashType ${spec.type})`);
  return spec.store(body.passwordHash, config);
}

const providerRoleKeys = (body: object): string[] | undefined => {
  const v = (body as { providerRoleKeys?: unknown }).providerRoleKeys;
  return Array.isArray(v) ? v.filter((k): k is string => typeof k === 'string').slice(0, 100) : undefined;
};

/** Every rule that needs no database: throws AppError (400) naming the field. */
export function prepare(body: MigrateUserBody): Prepared {
  if (body.phoneNumberType !== undefined && body.phoneNumber === undefined) throw new AppError('VALIDATION', 'phoneNumberType needs phoneNumber');
  const roleKeys = providerRoleKeys(body);
  return {
    body,
    email: body.email.trim().toLowerCase(),
    passwordHash: importedHash(body),
    metadata: body.metadata !== undefined ? parseMetadata(body.metadata, 'metadata') : {},
    vendorMetadata: body.vendorMetadata !== undefined ? parseMetadata(body.vendorMetadata, 'vendorMetadata') : {},
    ...(roleKeys ? { providerRoleKeys: roleKeys } : {}),
  };
}

/** The users row of a prepared body (the membership, phone, roles and applications are written beside it). */
export function userColumns(p: Prepared, id: string, kek: Buffer) {
  const { body } = p;
  return {
    id,
    email: p.email,
    username: body.username ?? null,
    name: body.name ?? '',
    profile_picture_url: body.profilePictureUrl ?? null,
    verified: body.verifyUser ?? false,
    provider: body.provider ?? 'local',
    metadata: p.metadata,
    vendor_metadata: p.vendorMetadata,
    password_hash: p.passwordHash,
    must_reset_password: p.passwordHash === null,
    mfa_enrolled: body.authenticatorAppMfaSecret !== undefined,
    authenticator_mfa_secret_enc: body.authenticatorAppMfaSecret ? encrypt(kek, body.authenticatorAppMfaSecret.replace(/=+$/, '').toUpperCase()) : null,
    phone_number_type: body.phoneNumber ? (body.phoneNumberType ?? null) : null,
    active_tenant_id: body.tenantId,
  };
}

/** The outbox payload of `user.created` for a migrated user (docs/events.md): no hash, secret or metadata. */
export const createdEvent = (id: string, email: string, tenantId: string) => ({
  eventKey: 'user.created' as const,
  tenantId,
  entity: { type: 'user', id },
  data: { userId: id, email, tenantId, source: 'migration' },
});
