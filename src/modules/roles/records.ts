import { AppError, type ErrorCode } from '../../http/errors.ts';
import { iso } from '../../lib/time.ts';
import type { Category, PermissionView, RoleRecord } from './schema.ts';
import type { CategoryRow, PermissionRow, RoleRow } from './store.ts';

export function toRole(r: RoleRow, vendorId: string): RoleRecord {
  return {
    id: r.id,
    vendorId,
    tenantId: r.tenant_id,
    key: r.key,
    name: r.name,
    description: r.description,
    isDefault: r.is_default,
    firstUserRole: r.first_user_role,
    level: r.level,
    createdAt: iso(r.created_at)!,
    updatedAt: iso(r.updated_at)!,
    permissions: r.permissions ?? [],
  };
}

export function toPermission(r: PermissionRow): PermissionView {
  return {
    id: r.id,
    key: r.key,
    name: r.name,
    description: r.description,
    createdAt: iso(r.created_at)!,
    updatedAt: iso(r.updated_at)!,
    roleIds: r.role_ids ?? [],
    categoryId: r.category_id,
    fePermission: r.fe_permission,
    assignmentType: r.assignment_type,
  };
}

export function toCategory(r: CategoryRow): Category {
  return {
    id: r.id,
    name: r.name,
    description: r.description,
    createdAt: iso(r.created_at)!,
    updatedAt: iso(r.updated_at)!,
    feCategory: r.fe_category,
  };
}

/** A NUL character or a lone UTF-16 surrogate: PostgreSQL refuses both in text. */
const UNSTORABLE = /\u0000|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;
const CONTROL = /[\u0000-\u001f\u007f]/;

/** A display name: not blank, no control characters. */
export function checkName(value: string | undefined, field: string): void {
  if (value === undefined) return;
  if (!value.trim()) throw new AppError('VALIDATION', `${field} must not be blank`);
  if (CONTROL.test(value) || UNSTORABLE.test(value))
    throw new AppError('VALIDATION', `${field} must not contain control characters or unpaired surrogates`);
}

/** Free text: line breaks allowed, but nothing the database cannot store. */
export function checkText(value: string | undefined, field: string): void {
  if (value !== undefined && UNSTORABLE.test(value))
    throw new AppError('VALIDATION', `${field} must not contain NUL characters or unpaired surrogates`);
}

/** Values repeated in a list, each once, in first-seen order. */
export function repeated(values: readonly string[]): string[] {
  const seen = new Set<string>();
  const out = new Set<string>();
  for (const v of values) (seen.has(v) ? out : seen).add(v);
  return [...out];
}

/** `ids` not found in `known` (compared case-insensitively, since uuids are), in the caller's spelling. */
export function missing(ids: readonly string[], known: Iterable<string>): string[] {
  const have = new Set([...known].map((k) => k.toLowerCase()));
  return [...new Set(ids.filter((id) => !have.has(id.toLowerCase())))];
}

export const normalizeIds = (ids: readonly string[]): string[] => [...new Set(ids.map((s) => s.toLowerCase()))];

/** A 400 naming the ids of a body field that name nothing (or nothing the caller may use). */
export function unknownIds(field: string, ids: string[], what: string): AppError {
  return new AppError(
    'UNKNOWN_IDS',
    `${field} names ${what} that do not exist${what === 'roles' ? ' or belong to another account' : ''}: ${ids.join(', ')}`,
    { field, ids },
  );
}

/** A unique violation that slipped past the pre-checks (a concurrent writer) becomes the conflict it is. */
export async function uniqueAs<T>(code: ErrorCode, message: string, fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    if ((err as { code?: unknown })?.code === '23505') throw new AppError(code, message);
    throw err;
  }
}
