import { AppError } from '../../http/errors.ts';
import type { Db, Queryable } from '../../storage/db.ts';
import { parseMetadata, toAccount, type Account, type AccessType, type TenantsService } from '../tenants/index.ts';
import type {
  AssignBody,
  CreateSubAccount,
  HierarchyEntry,
  TreeNode,
  UnassignBody,
  UpdateSubAccount,
} from './schema.ts';
import * as store from './store.ts';
import { createUserHierarchy } from './user-hierarchy.ts';
import { createTreeV2 } from './tree-v2.ts';
import type { EventsService } from '../events/index.ts';

export interface HierarchyDeps {
  db: Db;
  tenants: TenantsService;
  /** The outbox: account.moved. */
  events?: EventsService;
}

/** Who calls: an environment (vendor) token may act on any account; a user token only within its account's subtree. */
export type Actor = { kind: 'vendor' } | { kind: 'user'; tenantId: string };

/** The deepest a hierarchy may go (levels below a root); every walk stops there. */
export const MAX_DEPTH = 1000;

/** How far a user's reach extends from their own account: `self` includes it, `strict` only its descendants. */
type Reach = 'self' | 'strict';

/** A NUL character or a lone UTF-16 surrogate: PostgreSQL refuses both in text and jsonb. */
const UNSTORABLE = /\u0000|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

/** Refuses, as a 400 naming the field, a string (or an object key, at any depth) that the database cannot store. */
function requireStorable(value: unknown, path: string): void {
  if (typeof value === 'string') {
    if (UNSTORABLE.test(value))
      throw new AppError('VALIDATION', `${path} must not contain NUL characters or unpaired surrogates`);
  } else if (Array.isArray(value)) {
    value.forEach((v, i) => requireStorable(v, `${path}.${i}`));
  } else if (value !== null && typeof value === 'object') {
    for (const [k, v] of Object.entries(value)) {
      requireStorable(k, `${path} key`);
      requireStorable(v, `${path}.${k}`);
    }
  }
}

/** An account body: its fields, and its metadata also when it arrives as a string holding JSON. */
function requireStorableBody(body: { metadata?: unknown }): void {
  requireStorable(body, 'body');
  if (typeof body.metadata === 'string')
    requireStorable(parseMetadata(body.metadata, 'body.metadata'), 'body.metadata');
}

export type HierarchyService = ReturnType<typeof createHierarchyService>;

export function createHierarchyService(deps: HierarchyDeps) {
  const { db, tenants } = deps;

  /** True when `tenantId` is a (strict) descendant of `rootId`: a walk up from `tenantId`, as long as its depth. */
  async function isDescendant(q: Queryable, rootId: string, tenantId: string): Promise<boolean> {
    if (rootId === tenantId) return false;
    return (await store.ancestors(q, tenantId, MAX_DEPTH)).some((a) => a.tenant_id === rootId);
  }

  /**
   * A user may act on `tenantId` only within their account's subtree (their account itself when `reach` is `self`).
   * An id outside it answers 403 whether or not it names an account, so a user cannot probe for account ids.
   */
  async function authorize(q: Queryable, actor: Actor, tenantId: string, reach: Reach): Promise<void> {
    if (actor.kind === 'vendor') return;
    if (reach === 'self' && tenantId === actor.tenantId) return;
    if (!(await isDescendant(q, actor.tenantId, tenantId))) {
      const what = reach === 'self' ? 'your account or one of its sub-accounts' : 'a sub-account of your account';
      throw new AppError('OUTSIDE_HIERARCHY', `Account ${tenantId} is not ${what}`);
    }
  }

  /** The live account's row, locked for this transaction; 404 naming the field when there is none. */
  async function requireLocked(
    tx: Queryable,
    tenantId: string,
    field: string,
    mode: 'update' | 'share',
  ): Promise<store.WalkRow> {
    const row = await store.lockLive(tx, tenantId, mode);
    if (!row) throw new AppError('ACCOUNT_NOT_FOUND', `No account with ${field} ${tenantId}`);
    return row;
  }

  /** Ancestors of `parentId` (nearest first), refusing a hierarchy too deep to walk completely. */
  async function chainAbove(q: Queryable, parentId: string): Promise<string[]> {
    const up = await store.ancestors(q, parentId, MAX_DEPTH);
    if (up.length === MAX_DEPTH && up[up.length - 1].parent_tenant_id !== null) {
      throw new AppError('HIERARCHY_TOO_DEEP', `The hierarchy above ${parentId} is deeper than ${MAX_DEPTH} levels`);
    }
    return up.map((a) => a.tenant_id);
  }

  const entries = (rows: store.WalkRow[]): HierarchyEntry[] =>
    rows.map((r) => ({ tenantId: r.tenant_id, tenantName: r.name, level: r.level }));

  async function moved(tx: Queryable, tenantId: string, from: string | null, to: string | null): Promise<void> {
    await deps.events?.emit(tx, {
      eventKey: 'account.moved',
      tenantId,
      entity: { type: 'account', id: tenantId },
      data: { tenantId, previousParentTenantId: from, parentTenantId: to },
    });
  }

  return {
    ...createUserHierarchy({ db, maxDepth: MAX_DEPTH }),
    ...createTreeV2({ db, maxDepth: MAX_DEPTH }),

    /** Makes `childTenantId` a sub-account of `parentTenantId`; an account that has a parent moves. */
    async assign(body: AssignBody): Promise<Account> {
      const { parentTenantId, childTenantId } = body;
      return db.transaction(async (tx) => {
        await store.lockHierarchy(tx);
        await requireLocked(tx, parentTenantId, 'parentTenantId', 'share');
        const before = await requireLocked(tx, childTenantId, 'childTenantId', 'update');
        if (parentTenantId === childTenantId) {
          throw new AppError(
            'HIERARCHY_CYCLE',
            `parentTenantId and childTenantId are both ${childTenantId}: an account cannot be its own parent`,
          );
        }
        const above = await chainAbove(tx, parentTenantId);
        if (above.includes(childTenantId)) {
          throw new AppError(
            'HIERARCHY_CYCLE',
            `parentTenantId ${parentTenantId} is a sub-account of childTenantId ${childTenantId}: the assignment would create a cycle`,
          );
        }
        const height = await store.subtreeHeight(tx, childTenantId, MAX_DEPTH);
        if (above.length + 1 + height > MAX_DEPTH) {
          throw new AppError(
            'HIERARCHY_TOO_DEEP',
            `Placing ${childTenantId} under ${parentTenantId} would make the hierarchy deeper than ${MAX_DEPTH} levels`,
          );
        }
        await moved(tx, childTenantId, before.parent_tenant_id, parentTenantId);
        return toAccount((await store.setParent(tx, childTenantId, parentTenantId))!);
      });
    },

    /** Detaches an account from its parent; it becomes a top-level account with its sub-accounts kept. */
    async unassign(body: UnassignBody): Promise<Account> {
      const field = body.childTenantId ? 'childTenantId' : 'tenantId';
      const childTenantId = body.childTenantId ?? body.tenantId;
      if (!childTenantId) throw new AppError('VALIDATION', 'body.childTenantId is required (or body.tenantId)');
      if (body.childTenantId && body.tenantId && body.childTenantId !== body.tenantId) {
        throw new AppError(
          'VALIDATION',
          'body.childTenantId and body.tenantId name different accounts; send one of them',
        );
      }
      return db.transaction(async (tx) => {
        await store.lockHierarchy(tx);
        const row = await requireLocked(tx, childTenantId, field, 'update');
        if (row.parent_tenant_id === null)
          throw new AppError('NOT_IN_HIERARCHY', `Account ${childTenantId} has no parent account`);
        await moved(tx, childTenantId, row.parent_tenant_id, null);
        return toAccount((await store.setParent(tx, childTenantId, null))!);
      });
    },

    /** Every sub-account below the account, level 1 = direct children; by level, name, tenant id. */
    async subAccounts(tenantId: string): Promise<HierarchyEntry[]> {
      await tenants.requireLive(db, tenantId);
      return entries(await store.descendants(db, tenantId, MAX_DEPTH));
    },

    /** The account's parents, nearest first (level 1 = direct parent). A user reaches their account and its subtree. */
    async parents(tenantId: string, actor: Actor): Promise<HierarchyEntry[]> {
      await authorize(db, actor, tenantId, 'self');
      await tenants.requireLive(db, tenantId);
      return entries(await store.ancestors(db, tenantId, MAX_DEPTH));
    },

    /** The account and its sub-accounts as a tree, built from one walk; children by name, then tenant id. */
    async tree(tenantId: string): Promise<TreeNode> {
      const root = await tenants.requireLive(db, tenantId);
      const rows = await store.descendants(db, tenantId, MAX_DEPTH);
      const top: TreeNode = { tenantId: root.tenant_id, tenantName: root.name, children: [] };
      const nodes = new Map<string, TreeNode>([[top.tenantId, top]]);
      for (const r of rows) {
        const node: TreeNode = { tenantId: r.tenant_id, tenantName: r.name, children: [] };
        nodes.set(node.tenantId, node);
        nodes.get(r.parent_tenant_id!)?.children.push(node);
      }
      return top;
    },

    /**
     * Creates a sub-account under `parentTenantId`; a user only within their subtree. Only the environment may reuse
     * a removed account's id (reactivating it): a user would inherit its audit log and data, so gets 409.
     */
    async createSubAccount(actor: Actor, body: CreateSubAccount): Promise<Account> {
      requireStorableBody(body);
      return db.transaction(async (tx) => {
        await store.lockHierarchy(tx);
        await authorize(tx, actor, body.parentTenantId, 'self');
        await requireLocked(tx, body.parentTenantId, 'parentTenantId', 'share');
        if ((await chainAbove(tx, body.parentTenantId)).length + 1 > MAX_DEPTH) {
          throw new AppError(
            'HIERARCHY_TOO_DEEP',
            `A sub-account of ${body.parentTenantId} would be deeper than ${MAX_DEPTH} levels`,
          );
        }
        return tenants.create(body, tx, { reactivate: actor.kind === 'vendor' });
      });
    },

    /** Removes a sub-account (and its users); its own sub-accounts move to its parent. */
    async removeSubAccount(actor: Actor, tenantId: string): Promise<Account> {
      await authorize(db, actor, tenantId, 'strict');
      const row = await tenants.requireLive(db, tenantId);
      if (row.parent_tenant_id === null)
        throw new AppError('NOT_IN_HIERARCHY', `Account ${tenantId} is not a sub-account (it has no parent account)`);
      return tenants.remove(tenantId);
    },

    async setManagement(actor: Actor, tenantId: string, isReseller: boolean): Promise<Account> {
      await authorize(db, actor, tenantId, 'strict');
      const row = await store.setReseller(db, tenantId, isReseller);
      if (!row) throw new AppError('ACCOUNT_NOT_FOUND', `No account with tenantId ${tenantId}`);
      return toAccount(row);
    },

    async setHierarchySettings(actor: Actor, tenantId: string, subAccountAccessType: AccessType): Promise<Account> {
      await authorize(db, actor, tenantId, 'self');
      const row = await store.setAccessType(db, tenantId, subAccountAccessType);
      if (!row) throw new AppError('ACCOUNT_NOT_FOUND', `No account with tenantId ${tenantId}`);
      return toAccount(row);
    },

    async updateSubAccount(actor: Actor, tenantId: string, body: UpdateSubAccount): Promise<Account> {
      requireStorableBody(body);
      await authorize(db, actor, tenantId, 'strict');
      return tenants.update(tenantId, body);
    },
  };
}
