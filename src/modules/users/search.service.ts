import { groupsOfUsers } from '../groups/index.ts';
import type { UsersCore } from './profile.service.ts';
import type { PhraseQuery, User } from './schema.ts';
import { accountAndBelow, searchUsers } from './search.store.ts';
import type { UsersDeps } from './service.ts';

/** The fuzzy user search (GET /identity/resources/users/v1/query/phrase). */
export function createSearchOps(deps: UsersDeps, core: UsersCore) {
  const { db } = deps;
  return {
    /**
     * Up to `_limit` users (default 10) best matching `_phrase` (or `_filter`), narrowed by the exact identifier, the
     * name prefix and the account (`tenantId`, with its sub-accounts when `_includeSubTenants`). Records are built for
     * `tenantId` when given. No phrase: the narrowed users, oldest first.
     */
    async searchUsers(query: PhraseQuery, tenantId?: string): Promise<{ items: User[] }> {
      const limit = query._limit ?? 10;
      const page = query._offset ?? 0;
      const phrase = (query._phrase ?? query._filter)?.trim().toLowerCase() || undefined;
      const ident = query._identifier?.trim() || undefined;
      const type = query._identifierType ?? 'email';
      const rows = await db.transaction(async (tx) => {
        const tenantIds = tenantId ? await accountAndBelow(tx, tenantId, query._includeSubTenants === true) : undefined;
        return searchUsers(tx, {
          limit,
          page,
          phrase,
          tenantIds,
          email: ident && type === 'email' ? ident : undefined,
          username: ident && type === 'username' ? ident : undefined,
          phone: ident && type === 'phoneNumber' ? ident : undefined,
          namePrefix: query._namePrefix?.trim() || undefined,
        });
      });
      const groups = await groupsOfUsers(
        db,
        rows.map((r) => r.id),
      );
      const items: User[] = [];
      for (const row of rows) items.push(await core.record(db, row, tenantId, { groups }));
      return { items };
    },
  };
}
