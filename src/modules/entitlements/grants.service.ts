import { AppError } from '../../http/errors.ts';
import { newId } from '../../lib/crypto.ts';
import type { Db } from '../../storage/db.ts';
import type { CreateGrant, GrantListQuery } from './schema.ts';
import { grantDto, page, write, type EntitlementsDeps } from './records.ts';
import * as store from './store.ts';

/** Grants ("entitlements"): a plan given to an account, or to one user of it, with an optional expiry. */
export function createGrantsService({ db, vendorId, requireAccount, events }: EntitlementsDeps) {
  const exists = () => new AppError('ENTITLEMENT_EXISTS', 'This plan is already granted to this account or user');

  async function requireGrant(q: Db, id: string) {
    const [row] = store.isId(id) ? await store.grants(q, { ids: [id] }) : [];
    if (!row) throw new AppError('ENTITLEMENT_NOT_FOUND', `No entitlement with id ${id}`);
    return row;
  }
  async function out(q: Db, rows: store.GrantRow[]) {
    const plans = new Map(
      (await store.plans(q, { ids: [...new Set(rows.map((r) => r.plan_id))] })).map((p) => [p.id, p]),
    );
    return rows.map((r) => grantDto(r, vendorId(), plans.get(r.plan_id)));
  }
  async function insert(tx: Db, b: CreateGrant): Promise<string> {
    const [plan] = store.isId(b.planId) ? await store.plans(tx, { ids: [b.planId] }) : [];
    if (!plan) throw new AppError('PLAN_NOT_FOUND', `No plan with id ${b.planId} (planId)`);
    await requireAccount(tx, b.tenantId);
    // Without an explicit expiry, the plan's default time limitation (days) sets one.
    const expiration =
      b.expirationDate !== undefined
        ? b.expirationDate
        : plan.default_time_limitation
          ? new Date(Date.now() + plan.default_time_limitation * 86_400_000).toISOString()
          : null;
    const id = newId();
    await store.insertRow(tx, 'entitlement_grants', {
      tenant_id: b.tenantId,
      id,
      plan_id: plan.id,
      user_id: b.userId ?? null,
      expiration_date: expiration,
    });
    await events?.emit(tx, {
      eventKey: 'entitlement.granted',
      tenantId: b.tenantId,
      entity: { type: 'entitlement', id },
      data: {
        entitlementId: id,
        planId: plan.id,
        tenantId: b.tenantId,
        userId: b.userId ?? null,
        expirationDate: expiration,
      },
    });
    return id;
  }
  /** Deletes a grant (404 when there is none) and emits entitlement.revoked in the same transaction. */
  async function revoke(tx: Db, id: string): Promise<void> {
    const row = await requireGrant(tx, id);
    await store.deleteRow(tx, 'entitlement_grants', id);
    await events?.emit(tx, {
      eventKey: 'entitlement.revoked',
      tenantId: row.tenant_id,
      entity: { type: 'entitlement', id },
      data: { entitlementId: id, planId: row.plan_id, tenantId: row.tenant_id, userId: row.user_id },
    });
  }

  return {
    async list(q: GrantListQuery) {
      const limit = q.limit ?? 50;
      const rows = await store.grants(db, {
        planIds: q.planId ? [q.planId] : undefined,
        tenantId: q.tenantId,
        userId: q.userId,
        level: q.assignLevel,
        limit: limit + 1,
        offset: q.offset ?? 0,
        desc: q.sortType === 'DESC',
      });
      const p = page(rows, limit);
      return { items: await out(db, p.items), hasNext: p.hasNext };
    },
    async get(id: string) {
      return (await out(db, [await requireGrant(db, id)]))[0];
    },
    async create(body: CreateGrant) {
      const id = await write(db, (tx) => insert(tx, body), exists);
      return this.get(id);
    },
    async createBatch(items: CreateGrant[]) {
      const ids = await write(
        db,
        async (tx) => {
          const out: string[] = [];
          for (const b of items) out.push(await insert(tx, b));
          return out;
        },
        exists,
      );
      return { entitlementIds: ids };
    },
    async update(id: string, expirationDate: string | null) {
      await write(db, async (tx) => {
        await requireGrant(tx, id);
        await store.updateRow(tx, 'entitlement_grants', id, { expiration_date: expirationDate });
      });
      return this.get(id);
    },
    async updateBatch(items: { id: string; expirationDate: string | null }[]) {
      await write(db, async (tx) => {
        for (const it of items) {
          await requireGrant(tx, it.id);
          await store.updateRow(tx, 'entitlement_grants', it.id, { expiration_date: it.expirationDate });
        }
      });
    },
    async remove(id: string) {
      await write(db, (tx) => revoke(tx, id));
    },
    async removeBatch(ids: string[]) {
      await write(db, async (tx) => {
        for (const id of ids) await revoke(tx, id);
      });
    },
    /** Plans granted to an account (account-level or to any of its users). */
    async tenantPlanIds(tenantId: string): Promise<string[]> {
      return [...new Set((await store.grants(db, { tenantId })).map((g) => g.plan_id))];
    },
    /**
     * Account creation hook (accounts created, reactivated or migrated): every plan marked assign-on-signup is granted
     * to each new account, expiring after the plan's default time limitation (days) when it has one, in the creating
     * transaction; the offset moves only when something was granted.
     */
    async assignSignupPlans(tx: Db, tenantIds: string[]): Promise<void> {
      if (tenantIds.length === 0) return;
      const { rows: plans } = await tx.query<{ id: string; default_time_limitation: number | null }>(
        'SELECT id, default_time_limitation FROM entitlement_plans WHERE assign_on_signup ORDER BY created_at, id',
      );
      if (plans.length === 0) return;
      const tenants: string[] = [],
        ids: string[] = [],
        planIds: string[] = [],
        days: (number | null)[] = [];
      for (const t of tenantIds) {
        for (const p of plans) {
          tenants.push(t);
          ids.push(newId());
          planIds.push(p.id);
          days.push(p.default_time_limitation);
        }
      }
      const { rows, rowCount } = await tx.query<{
        tenant_id: string;
        id: string;
        plan_id: string;
        expiration_date: Date | null;
      }>(
        `INSERT INTO entitlement_grants (tenant_id, id, plan_id, user_id, expiration_date)
         SELECT t, i, p, NULL, CASE WHEN d IS NULL THEN NULL ELSE now() + d * interval '1 day' END
           FROM unnest($1::text[], $2::uuid[], $3::uuid[], $4::int[]) AS x(t, i, p, d)
         ON CONFLICT DO NOTHING RETURNING tenant_id, id, plan_id, expiration_date`,
        [tenants, ids, planIds, days],
      );
      if (rowCount > 0) await store.bumpOffset(tx);
      await events?.emitMany(
        tx,
        rows.map((r) => ({
          eventKey: 'entitlement.granted' as const,
          tenantId: r.tenant_id,
          entity: { type: 'entitlement', id: r.id },
          data: {
            entitlementId: r.id,
            planId: r.plan_id,
            tenantId: r.tenant_id,
            userId: null,
            expirationDate: r.expiration_date ? new Date(r.expiration_date).toISOString() : null,
            via: 'assign-on-signup',
          },
        })),
      );
    },
    /** Account removal hook: its grants go with it (and the agent hears of it). */
    async forgetAccount(tx: Db, tenantId: string): Promise<void> {
      const { rows, rowCount } = await tx.query<{ id: string; plan_id: string; user_id: string | null }>(
        'DELETE FROM entitlement_grants WHERE tenant_id = $1 RETURNING id, plan_id, user_id',
        [tenantId],
      );
      if (rowCount > 0) await store.bumpOffset(tx);
      await events?.emitMany(
        tx,
        rows.map((r) => ({
          eventKey: 'entitlement.revoked' as const,
          tenantId,
          entity: { type: 'entitlement', id: r.id },
          data: { entitlementId: r.id, planId: r.plan_id, tenantId, userId: r.user_id, reason: 'account_deleted' },
        })),
      );
    },
  };
}
