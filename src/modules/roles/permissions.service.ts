import { AppError } from '../../http/errors.ts';
import { newId } from '../../lib/crypto.ts';
import type { Db, Queryable } from '../../storage/db.ts';
import { assertPermissionsGrantable, assertRoleEditable } from './account-writes.ts';
import type { Grantor } from './grants.ts';
import {
  checkName,
  checkText,
  missing,
  normalizeIds,
  repeated,
  toCategory,
  toPermission,
  uniqueAs,
  unknownIds,
} from './records.ts';
import type {
  AssignmentType,
  Category,
  CreateCategory,
  CreatePermission,
  PermissionView,
  UpdateCategory,
  UpdatePermission,
} from './schema.ts';
import * as store from './store.ts';

const VENDOR: Grantor = { kind: 'vendor' };

export interface PermissionsDeps {
  db: Db;
  /** Role rows for the ids of a body field; a 400 naming the unknown ones. */
  requireRoles: (q: Queryable, ids: string[], field: string, scope?: string) => Promise<store.RoleRow[]>;
}

/** Permissions (environment-wide) and their categories. */
export function createPermissionsService(deps: PermissionsDeps) {
  const { db, requireRoles } = deps;

  async function requirePermission(q: Queryable, id: string): Promise<store.PermissionRow> {
    const row = await store.findPermission(q, id);
    if (!row) throw new AppError('PERMISSION_NOT_FOUND', `No permission with id ${id}`);
    return row;
  }

  async function requireCategory(q: Queryable, id: string): Promise<store.CategoryRow> {
    const row = await store.findCategory(q, id);
    if (!row) throw new AppError('CATEGORY_NOT_FOUND', `No permission category with id ${id}`);
    return row;
  }

  /** 400 naming the category ids of a body that name no category. */
  async function requireCategories(q: Queryable, ids: string[], field: string): Promise<void> {
    const unknown = missing(ids, await store.existingCategoryIds(q, ids));
    if (unknown.length) throw unknownIds(field, unknown, 'categories');
  }

  async function reload(q: Queryable, id: string): Promise<PermissionView> {
    return toPermission((await store.findPermission(q, id))!);
  }

  return {
    // -- permissions --

    async listPermissions(): Promise<PermissionView[]> {
      return (await store.allPermissions(db)).map(toPermission);
    },

    /** Creates permissions, all or none; answers them in body order. */
    async createPermissions(bodies: CreatePermission[]): Promise<PermissionView[]> {
      bodies.forEach((b, i) => {
        checkName(b.name, `body.${i}.name`);
        checkText(b.description, `body.${i}.description`);
      });
      const twice = repeated(bodies.map((b) => b.key));
      if (twice.length)
        throw new AppError('PERMISSION_KEY_EXISTS', `The body repeats permission keys: ${twice.join(', ')}`, {
          keys: twice,
        });
      return db.transaction(async (tx) => {
        const categoryIds = bodies.flatMap((b) => (b.categoryId !== undefined ? [b.categoryId] : []));
        await requireCategories(tx, categoryIds, 'categoryId');
        const rows: store.NewPermission[] = bodies.map((b) => ({
          id: newId(),
          key: b.key,
          name: b.name,
          description: b.description ?? '',
          category_id: b.categoryId?.toLowerCase() ?? null,
          assignment_type: b.assignmentType ?? 'ASSIGNABLE',
        }));
        const written = await store.insertPermissions(tx, rows);
        if (written.size < rows.length) {
          const taken = rows.filter((r) => !written.has(r.id)).map((r) => r.key);
          throw new AppError('PERMISSION_KEY_EXISTS', `Permission keys already exist: ${taken.join(', ')}`, {
            keys: taken,
          });
        }
        const byId = new Map(
          (
            await store.permissionsByIds(
              tx,
              rows.map((r) => r.id),
            )
          ).map((r) => [r.id, r]),
        );
        return rows.map((r) => toPermission(byId.get(r.id)!));
      });
    },

    /** Changes the given fields. A built-in permission keeps its key (the platform checks it) but may be renamed. */
    async updatePermission(id: string, body: UpdatePermission): Promise<PermissionView> {
      checkName(body.name, 'body.name');
      checkText(body.description, 'body.description');
      const values: Record<string, unknown> = {};
      if (body.key !== undefined) values.key = body.key;
      if (body.name !== undefined) values.name = body.name;
      if (body.description !== undefined) values.description = body.description;
      if (body.categoryId !== undefined) values.category_id = body.categoryId?.toLowerCase() ?? null;
      if (Object.keys(values).length === 0)
        throw new AppError('VALIDATION', 'The body must set at least one of key, name, description, categoryId');
      return db.transaction(async (tx) => {
        const row = await requirePermission(tx, id);
        if (row.fe_permission && body.key !== undefined && body.key !== row.key) {
          throw new AppError(
            'BUILT_IN_PROTECTED',
            `Permission ${row.key} is built in: Gatehouse checks its key, which cannot change`,
          );
        }
        if (body.key !== undefined && (await store.takenPermissionKeys(tx, [body.key], row.id)).length) {
          throw new AppError('PERMISSION_KEY_EXISTS', `A permission with key ${body.key} already exists`);
        }
        if (typeof body.categoryId === 'string') await requireCategories(tx, [body.categoryId], 'categoryId');
        await uniqueAs('PERMISSION_KEY_EXISTS', `A permission with key ${body.key} already exists`, () =>
          store.updatePermission(tx, row.id, values),
        );
        if (values.key !== undefined) await store.touchRoles(tx, row.role_ids);
        return reload(tx, row.id);
      });
    },

    /** Removes a permission from every role that holds it, then the permission. Built-in ones cannot be removed. */
    async deletePermission(id: string): Promise<void> {
      await db.transaction(async (tx) => {
        const row = await requirePermission(tx, id);
        if (row.fe_permission)
          throw new AppError('BUILT_IN_PROTECTED', `Permission ${row.key} is built in and cannot be removed`);
        await store.touchRoles(tx, row.role_ids);
        await store.deletePermission(tx, row.id);
      });
    },

    /** Makes `roleIds` exactly the roles that hold the permission (roles of any scope). */
    /**
     * Makes `roleIds` exactly the roles holding the permission. A user (account-writes.ts's rule) names roles of its
     * own account, and only those change: environment roles and other accounts' keep the permission or not.
     */
    async setPermissionRoles(id: string, roleIds: string[], actor: Grantor = VENDOR): Promise<PermissionView> {
      return db.transaction(async (tx) => {
        const row = await requirePermission(tx, id);
        const account = actor.kind === 'user' ? actor.tenantId : undefined;
        const listed = await requireRoles(tx, roleIds, 'roleIds', account);
        if (actor.kind === 'user') {
          assertPermissionsGrantable(actor, [row], 'permissionId');
          const ids = new Set(listed.map((r) => r.id));
          const dropped = await store.rolesByIds(
            tx,
            row.role_ids.filter((r) => !ids.has(r)),
          );
          // Environment roles named are refused; the account's roles that gain or lose it must be within the user.
          const gaining = listed.filter((r) => r.tenant_id === null || !row.role_ids.includes(r.id));
          const losing = dropped.filter((r) => r.tenant_id === account);
          for (const r of [...gaining, ...losing]) await assertRoleEditable(tx, actor, r);
        }
        const changed = await store.setPermissionRoles(tx, row.id, normalizeIds(roleIds), account);
        await store.touchRoles(tx, changed);
        return reload(tx, row.id);
      });
    },

    /**
     * Sets the classification of permissions, all or none. Answers one permission record, as routes.md's
     * PermissionResponse says: the one named first in `ids` (the others are read back with the permission list).
     */
    async classifyPermissions(ids: string[], type: AssignmentType): Promise<PermissionView> {
      return db.transaction(async (tx) => {
        const rows = await store.permissionsByIds(tx, ids);
        const unknown = missing(
          ids,
          rows.map((r) => r.id),
        );
        if (unknown.length) throw unknownIds('permissionIds', unknown, 'permissions');
        await store.classify(
          tx,
          rows.map((r) => r.id),
          type,
        );
        return reload(tx, ids[0].toLowerCase());
      });
    },

    // -- categories --

    async listCategories(): Promise<Category[]> {
      return (await store.allCategories(db)).map(toCategory);
    },

    async createCategory(body: CreateCategory): Promise<Category> {
      checkName(body.name, 'body.name');
      checkText(body.description, 'body.description');
      const id = body.id?.toLowerCase() ?? newId();
      return db.transaction(async (tx) => {
        if (await store.findCategory(tx, id))
          throw new AppError('CATEGORY_EXISTS', `A permission category with id ${id} already exists`);
        if (await store.categoryNamed(tx, body.name))
          throw new AppError('CATEGORY_EXISTS', `A permission category named ${body.name} already exists`);
        const row = await store.insertCategory(tx, { id, name: body.name, description: body.description ?? '' });
        if (!row)
          throw new AppError(
            'CATEGORY_EXISTS',
            `A permission category with id ${id} or name ${body.name} already exists`,
          );
        return toCategory(row);
      });
    },

    async updateCategory(id: string, body: UpdateCategory): Promise<Category> {
      checkName(body.name, 'body.name');
      checkText(body.description, 'body.description');
      const values: Record<string, unknown> = {};
      if (body.name !== undefined) values.name = body.name;
      if (body.description !== undefined) values.description = body.description;
      if (Object.keys(values).length === 0)
        throw new AppError('VALIDATION', 'The body must set at least one of name, description');
      return db.transaction(async (tx) => {
        const row = await requireCategory(tx, id);
        if (body.name !== undefined && (await store.categoryNamed(tx, body.name, row.id))) {
          throw new AppError('CATEGORY_EXISTS', `A permission category named ${body.name} already exists`);
        }
        const updated = await uniqueAs(
          'CATEGORY_EXISTS',
          `A permission category named ${body.name} already exists`,
          () => store.updateCategory(tx, row.id, values),
        );
        return toCategory(updated!);
      });
    },

    /** Removes a category; its permissions stay, without a category. The built-in category cannot be removed. */
    async deleteCategory(id: string): Promise<Category> {
      return db.transaction(async (tx) => {
        const row = await requireCategory(tx, id);
        if (row.fe_category)
          throw new AppError('BUILT_IN_PROTECTED', `Category ${row.name} is built in and cannot be removed`);
        await store.deleteCategory(tx, row.id);
        return toCategory(row);
      });
    },
  };
}
