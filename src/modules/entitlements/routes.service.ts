import { AppError } from '../../http/errors.ts';
import { newId } from '../../lib/crypto.ts';
import type { Db } from '../../storage/db.ts';
import type { RouteInput } from './schema.ts';
import { routeDto, write, type EntitlementsDeps } from './records.ts';
import * as store from './store.ts';

/** Route rules (API access control) and the routes mode. */
export function createRouteRulesService({ db, vendorId }: EntitlementsDeps) {
  const exists = (b: RouteInput) => () =>
    new AppError('ROUTE_EXISTS', `A route for ${b.method ?? 'this method'} ${b.path ?? 'and path'} already exists`);
  async function requireRoute(q: Db, id: string) {
    const [row] = store.isId(id) ? await store.routes(q, [id]) : [];
    if (!row) throw new AppError('ROUTE_RULE_NOT_FOUND', `No route with id ${id}`);
    return row;
  }
  const rulesOf = (rules: { type: string; value: string }[]) =>
    rules.map((r) => ({ id: newId(), type: r.type, value: r.value }));
  const cols = (b: RouteInput) => ({
    ...(b.method !== undefined ? { method: b.method } : {}),
    ...(b.path !== undefined ? { path: b.path } : {}),
    ...(b.policyType !== undefined ? { policy_type: b.policyType } : {}),
    ...(b.description !== undefined ? { description: b.description } : {}),
    ...(b.priority !== undefined ? { priority: b.priority } : {}),
    ...(b.rules !== undefined ? { rules: rulesOf(b.rules) } : {}),
  });

  return {
    async list() {
      return (await store.routes(db)).map(routeDto);
    },
    async get(id: string) {
      return routeDto(await requireRoute(db, id));
    },
    async create(b: RouteInput) {
      const id = newId();
      await write(
        db,
        async (tx) => {
          // Without a priority the route goes last: the next free number (priorities are serialised by the offset row lock).
          await store.bumpOffset(tx);
          const priority = b.priority ?? (await store.nextPriority(tx));
          await store.insertRow(tx, 'entitlement_routes', { id, description: '', rules: [], ...cols(b), priority });
        },
        exists(b),
      );
      return this.get(id);
    },
    async update(id: string, b: RouteInput) {
      const c = cols(b);
      if (Object.keys(c).length === 0) throw new AppError('VALIDATION', 'The body must set at least one field');
      await write(
        db,
        async (tx) => {
          await requireRoute(tx, id);
          await store.updateRow(tx, 'entitlement_routes', id, c);
        },
        exists(b),
      );
      return this.get(id);
    },
    async remove(id: string) {
      await write(db, async (tx) => {
        if (!(store.isId(id) && (await store.deleteRow(tx, 'entitlement_routes', id)))) await requireRoute(tx, id);
      });
    },
    async replaceRules(id: string, rules: { type: string; value: string }[]) {
      await write(db, async (tx) => {
        await requireRoute(tx, id);
        await store.updateRow(tx, 'entitlement_routes', id, { rules: rulesOf(rules) });
      });
      return (await this.get(id)).rules;
    },
    async getConfig() {
      const s = await store.settings(db);
      return { id: s.settings_id, vendorId: vendorId(), accessControlMode: s.routes_mode };
    },
    async setConfig(mode: 'guard' | 'monitor') {
      await write(db, (tx) => store.setRoutesMode(tx, mode));
      return this.getConfig();
    },
  };
}
