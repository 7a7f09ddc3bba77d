import { Compile } from 'typebox/compile';
import { AppError } from '../../http/errors.ts';
import { encrypt } from '../../lib/crypto.ts';
import { hasherFor, importerFor } from '../credentials/index.ts';
import { parseMetadata } from '../tenants/index.ts';
import type { NewUser } from '../users/index.ts';
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
    throw new AppError(
      'HASH_CONFIG_INVALID',
      'passwordHashConfig must be a stringified JSON object; it is not valid JSON',
    );
  }
  if (v === null || typeof v !== 'object' || Array.isArray(v))
    throw new AppError('HASH_CONFIG_INVALID', 'passwordHashConfig must be a stringified JSON object');
  return v as Record<string, unknown>;
}

/**
 * The stored hash for the body (wire.md section 8), or null when the user must set a password: no hash, or a hash
 * without passwordHashType that does not describe itself (interface rule 3: the user is prompted to reset).
 */
function importedHash(body: MigrateUserBody): string | null {
  if (body.passwordHash === undefined) {
    if (body.passwordHashType !== undefined)
      throw new AppError('VALIDATION', 'passwordHash is required with passwordHashType');
    return null;
  }
  if (body.passwordHashType === undefined) {
    const self = hasherFor(body.passwordHash);
    return self && (self.id === 'bcrypt' || self.id === 'argon2') && !self.imports!.check(undefined, body.passwordHash)
      ? body.passwordHash
      : null;
  }
  const hasher = importerFor(body.passwordHashType)!;
  const spec = hasher.imports!;
  const config = hashConfig(body);
  const missing = spec.required.find((k) => config?.[k] === undefined);
  if (missing)
    throw new AppError(
      'HASH_CONFIG_INVALID',
      `passwordHashConfig must hold ${missing} for passwordHashType ${spec.type} (keys: ${spec.required.join(', ')})`,
    );
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
  if (body.phoneNumberType !== undefined && body.phoneNumber === undefined)
    throw new AppError('VALIDATION', 'phoneNumberType needs phoneNumber');
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

/**
 * The user of a prepared body, for the users module's creation (its membership, phone and roles are written with
 * it; the applications beside it). `roleIds`: the roles the migration gives, resolved after the uniqueness checks.
 */
export function newUserOf(p: Prepared, kek: Buffer, roleIds: () => Promise<string[] | undefined>): NewUser {
  const { body } = p;
  return {
    source: 'migration',
    tenantId: body.tenantId,
    email: p.email,
    username: body.username ?? null,
    name: body.name ?? '',
    profilePictureUrl: body.profilePictureUrl ?? null,
    phoneNumber: body.phoneNumber ?? null,
    verified: body.verifyUser ?? false,
    provider: body.provider ?? 'local',
    metadata: p.metadata,
    vendorMetadata: p.vendorMetadata,
    passwordHash: p.passwordHash,
    imported: {
      mustResetPassword: p.passwordHash === null,
      mfaEnrolled: body.authenticatorAppMfaSecret !== undefined,
      authenticatorMfaSecretEnc: body.authenticatorAppMfaSecret
        ? encrypt(kek, body.authenticatorAppMfaSecret.replace(/=+$/, '').toUpperCase())
        : null,
      phoneNumberType: body.phoneNumber ? (body.phoneNumberType ?? null) : null,
    },
    roleIds,
  };
}
