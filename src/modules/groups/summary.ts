import { iso } from '../../lib/time.ts';
import type { UserGroupSummary } from './schema.ts';
import type { GroupRow } from './store.ts';

/** The short group record (the User record's `groups`, the users' groups lookup). */
export const toSummary = (r: GroupRow): UserGroupSummary => ({
  id: r.id,
  name: r.name,
  color: r.color,
  description: r.description,
  metadata: JSON.stringify(r.metadata ?? {}),
  managedBy: r.managed_by,
  createdAt: iso(r.created_at)!,
  updatedAt: iso(r.updated_at)!,
});
