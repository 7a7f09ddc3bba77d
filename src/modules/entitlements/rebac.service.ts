import { AppError } from '../../http/errors.ts';
import { iso } from '../../lib/time.ts';
import { isForeignKeyViolation, isUniqueViolation } from '../../lib/pg-errors.ts';
import type { Db } from '../../storage/db.ts';
import type { EntitlementsDeps } from './records.ts';
import type {
  ActionInput,
  Assignment,
  AssignmentQuery,
  CheckBody,
  EntityTypeInput,
  PageQuery,
  RelationInput,
} from './rebac.schema.ts';
import * as store from './rebac.store.ts';

export type RebacService = ReturnType<typeof createRebacService>;
type Justification = 'MISSING_ACTION' | 'MISSING_RELATION' | 'RELATION_NOT_ACTIVE';

const bad = (field: string, rule: string) => new AppError('VALIDATION', `${field} ${rule}`, { fields: [field] });
const inUse = (what: string, users: string[]) =>
  new AppError('REBAC_IN_USE', `${what} is still referenced by ${users.join('; ')}`);
const dupes = (keys: string[]) => keys.filter((k, i) => keys.indexOf(k) !== i);

/**
 * ReBAC: entity types with their relations (which subject types may hold them) and actions (granted by any of the
 * listed relations), relation assignments between entities, and the check. Not in the agent's snapshot: ReBAC writes
 * do not bump the snapshot offset.
 */
export function createRebacService({ db, vendorId }: EntitlementsDeps) {
  /** One transaction; a unique violation left by a race becomes `conflict`, a foreign-key one a 409 in-use. */
  async function tx<T>(fn: (tx: Db) => Promise<T>, conflict?: () => AppError): Promise<T> {
    try {
      return await db.transaction(fn);
    } catch (err) {
      if (conflict && isUniqueViolation(err)) throw conflict();
      if (isForeignKeyViolation(err))
        throw new AppError('REBAC_IN_USE', 'A concurrent change still references this entity type or relation; retry');
      throw err;
    }
  }
  async function requireType(q: Db, key: string, lock = false) {
    const [row] = await store.entityTypes(q, { keys: [key], lock });
    if (!row) throw new AppError('ENTITY_TYPE_NOT_FOUND', `No entity type with key ${key}`);
    return row;
  }
  async function requireTypes(q: Db, keys: string[], field: (i: number) => string) {
    const have = new Set((await store.entityTypes(q, { keys: [...new Set(keys)] })).map((t) => t.key));
    const i = keys.findIndex((k) => !have.has(k));
    if (i >= 0) throw bad(field(i), `names an unknown entity type: ${keys[i]}`);
  }
  const typeDto = (r: store.EntityTypeRow) => ({
    key: r.key,
    description: r.description,
    createdAt: iso(r.created_at)!,
  });
  const relationDto = (r: store.RelationRow) => ({
    vendorId: vendorId(),
    targetEntityTypeKey: r.entity_type_key,
    key: r.key,
    subjectEntityTypeKeys: r.subject_entity_type_keys,
  });
  const actionDto = (r: store.ActionRow) => ({
    vendorId: vendorId(),
    entityTypeKey: r.entity_type_key,
    key: r.key,
    relationKeys: r.relation_keys,
  });
  async function checkRelationKeys(q: Db, typeKey: string, keys: string[], field: string) {
    if (dupes(keys).length) throw bad(field, `repeats ${dupes(keys)[0]}`);
    const have = new Set((await store.relations(q, typeKey, keys)).map((r) => r.key));
    const missing = keys.find((k) => !have.has(k));
    if (missing) throw bad(field, `names a relation entity type ${typeKey} does not have: ${missing}`);
  }

  // -- entity types --
  const typeExists = (key: string) => () =>
    new AppError('ENTITY_TYPE_EXISTS', `An entity type with key ${key} already exists`);
  async function listTypes(p: PageQuery) {
    const limit = p.limit ?? 50;
    const rows = await store.entityTypes(db, { limit: limit + 1, offset: p.offset ?? 0 });
    return { items: rows.slice(0, limit).map(typeDto), hasNext: rows.length > limit };
  }
  async function getType(key: string) {
    const row = await requireType(db, key);
    const [rels, acts] = await Promise.all([store.relations(db, key), store.actions(db, key)]);
    return { ...typeDto(row), relations: rels.map((r) => r.key), actions: acts.map((a) => a.key) };
  }
  const createType = (b: EntityTypeInput) =>
    tx(async (t) => {
      await store.insertEntityType(t, b.key, b.description ?? '');
      return typeDto(await requireType(t, b.key));
    }, typeExists(b.key));
  const updateType = (key: string, b: EntityTypeInput) =>
    tx(async (t) => {
      await requireType(t, key, true);
      await store.updateEntityType(t, key, b);
      return typeDto(await requireType(t, b.key));
    }, typeExists(b.key));
  /** Refused (409) while other types' relations or any assignment need it; its own relations and actions go with it. */
  const removeType = (key: string) =>
    tx(async (t) => {
      await requireType(t, key, true);
      const users = await store.entityTypeUsers(t, key);
      const why = [
        ...(users.relations.length ? [`relations ${users.relations.join(', ')}`] : []),
        ...(users.assignments ? [`${users.assignments} relation assignment(s)`] : []),
      ];
      if (why.length) throw inUse(`Entity type ${key}`, why);
      await store.deleteEntityType(t, key);
    });

  // -- relations of a type --
  const relationExists = (key: string) => () =>
    new AppError('ENTITY_RELATION_EXISTS', `The entity type already has a relation with key ${key}`);
  const createRelations = (typeKey: string, list: RelationInput[]) =>
    tx(
      async (t) => {
        await requireType(t, typeKey, true);
        const d = dupes(list.map((r) => r.key));
        if (d.length) throw bad(`relations[${list.map((r) => r.key).lastIndexOf(d[0])}].key`, `repeats ${d[0]}`);
        const existing = new Set((await store.relations(t, typeKey)).map((r) => r.key));
        const taken = list.find((r) => existing.has(r.key));
        if (taken) throw relationExists(taken.key)();
        for (const [i, r] of list.entries()) {
          await requireTypes(t, r.subjectEntityKeys, (j) => `relations[${i}].subjectEntityKeys[${j}]`);
          await store.insertRelation(t, typeKey, r.key, [...new Set(r.subjectEntityKeys)]);
        }
        return (
          await store.relations(
            t,
            typeKey,
            list.map((r) => r.key),
          )
        ).map(relationDto);
      },
      relationExists(list[0]?.key ?? ''),
    );
  const updateRelation = (typeKey: string, key: string, b: RelationInput) =>
    tx(async (t) => {
      await requireType(t, typeKey, true);
      const [row] = await store.relations(t, typeKey, [key]);
      if (!row) throw new AppError('ENTITY_RELATION_NOT_FOUND', `Entity type ${typeKey} has no relation ${key}`);
      await requireTypes(t, b.subjectEntityKeys, (j) => `subjectEntityKeys[${j}]`);
      const dropped = row.subject_entity_type_keys.filter((s) => !b.subjectEntityKeys.includes(s));
      const users = dropped.length ? await store.relationUsers(t, typeKey, key, dropped) : undefined;
      if (users?.assignments)
        throw inUse(`Subject types ${dropped.join(', ')} of relation ${key}`, [
          `${users.assignments} relation assignment(s)`,
        ]);
      await store.updateRelation(t, typeKey, key, { key: b.key, subjectTypes: [...new Set(b.subjectEntityKeys)] });
      return relationDto((await store.relations(t, typeKey, [b.key]))[0]);
    }, relationExists(b.key));
  /** Refused (409) while actions list it or assignments use it. */
  const removeRelation = (typeKey: string, key: string) =>
    tx(async (t) => {
      await requireType(t, typeKey, true);
      const users = await store.relationUsers(t, typeKey, key);
      const why = [
        ...(users.actions.length ? [`actions ${users.actions.join(', ')}`] : []),
        ...(users.assignments ? [`${users.assignments} relation assignment(s)`] : []),
      ];
      if (why.length) throw inUse(`Relation ${key} of ${typeKey}`, why);
      if (!(await store.deleteRelation(t, typeKey, key)))
        throw new AppError('ENTITY_RELATION_NOT_FOUND', `Entity type ${typeKey} has no relation ${key}`);
    });

  // -- actions of a type --
  const actionExists = (key: string) => () =>
    new AppError('ENTITY_ACTION_EXISTS', `The entity type already has an action with key ${key}`);
  const createActions = (typeKey: string, list: ActionInput[]) =>
    tx(
      async (t) => {
        await requireType(t, typeKey, true);
        const d = dupes(list.map((a) => a.key));
        if (d.length) throw bad(`actions[${list.map((a) => a.key).lastIndexOf(d[0])}].key`, `repeats ${d[0]}`);
        const existing = new Set((await store.actions(t, typeKey)).map((a) => a.key));
        const taken = list.find((a) => existing.has(a.key));
        if (taken) throw actionExists(taken.key)();
        for (const [i, a] of list.entries()) {
          await checkRelationKeys(t, typeKey, a.relationKeys, `actions[${i}].relationKeys`);
          await store.insertAction(t, typeKey, a.key, a.relationKeys);
        }
        return (
          await store.actions(
            t,
            typeKey,
            list.map((a) => a.key),
          )
        ).map(actionDto);
      },
      actionExists(list[0]?.key ?? ''),
    );
  const updateAction = (typeKey: string, key: string, b: ActionInput) =>
    tx(async (t) => {
      await requireType(t, typeKey, true);
      if (!(await store.actions(t, typeKey, [key])).length)
        throw new AppError('ENTITY_ACTION_NOT_FOUND', `Entity type ${typeKey} has no action ${key}`);
      await checkRelationKeys(t, typeKey, b.relationKeys, 'relationKeys');
      await store.updateAction(t, typeKey, key, b);
      return actionDto((await store.actions(t, typeKey, [b.key]))[0]);
    }, actionExists(b.key));
  const removeAction = (typeKey: string, key: string) =>
    tx(async (t) => {
      await requireType(t, typeKey);
      if (!(await store.deleteAction(t, typeKey, key)))
        throw new AppError('ENTITY_ACTION_NOT_FOUND', `Entity type ${typeKey} has no action ${key}`);
    });

  return {
    listTypes,
    getType,
    createType,
    updateType,
    removeType,
    createRelations,
    updateRelation,
    removeRelation,
    createActions,
    updateAction,
    removeAction,
    ...createAssignments(db, tx),
  };
}

const assignmentDto = (r: store.AssignmentRow) => ({
  subjectEntityTypeKey: r.subject_entity_type_key,
  subjectKey: r.subject_key,
  relationKey: r.relation_key,
  targetEntityTypeKey: r.target_entity_type_key,
  targetKey: r.target_key,
  ...(r.active_from ? { activeFrom: iso(r.active_from)! } : {}),
  ...(r.active_until ? { activeUntil: iso(r.active_until)! } : {}),
});
const keyOf = (a: Assignment): store.AssignmentKey => ({
  subject_entity_type_key: a.subjectEntityTypeKey,
  subject_key: a.subjectKey,
  relation_key: a.relationKey,
  target_entity_type_key: a.targetEntityTypeKey,
  target_key: a.targetKey,
});
const idOf = (a: Assignment) => JSON.stringify(Object.values(keyOf(a)));

/** Relation assignments and the check. */
function createAssignments(db: Db, tx: <T>(fn: (t: Db) => Promise<T>) => Promise<T>) {
  const dto = assignmentDto;
  async function list(q: AssignmentQuery) {
    const limit = q.limit ?? 50;
    const rows = await store.assignments(
      db,
      {
        subject_entity_type_key: q.subjectEntityTypeKey,
        subject_key: q.subjectKey,
        relation_key: q.relationKey,
        target_entity_type_key: q.targetEntityTypeKey,
        target_key: q.targetKey,
      },
      limit + 1,
      q.offset ?? 0,
    );
    return { items: rows.slice(0, limit).map(dto), hasNext: rows.length > limit };
  }
  /** All or nothing; an identical assignment again changes nothing; the same five keys with a new window replace the window. */
  const assign = (list: Assignment[]) =>
    tx(async (t) => {
      const seen = new Map<string, { i: number; from: number | null; until: number | null }>();
      const rows: store.AssignmentRow[] = [];
      const rels = new Map<string, Map<string, store.RelationRow>>();
      for (const [i, a] of list.entries()) {
        const f = (name: string) => `assignments[${i}].${name}`;
        const from = a.activeFrom ? Date.parse(a.activeFrom) : null;
        const until = a.activeUntil ? Date.parse(a.activeUntil) : null;
        if (from !== null && until !== null && until <= from) throw bad(f('activeUntil'), 'must be after activeFrom');
        const prior = seen.get(idOf(a));
        if (prior && (prior.from !== from || prior.until !== until))
          throw bad(f('activeFrom'), `repeats assignments[${prior.i}] with another window`);
        if (prior) continue;
        seen.set(idOf(a), { i, from, until });
        if (!rels.has(a.targetEntityTypeKey)) {
          if (!(await store.entityTypes(t, { keys: [a.targetEntityTypeKey] })).length)
            throw bad(f('targetEntityTypeKey'), `names an unknown entity type: ${a.targetEntityTypeKey}`);
          rels.set(
            a.targetEntityTypeKey,
            new Map((await store.relations(t, a.targetEntityTypeKey)).map((r) => [r.key, r])),
          );
        }
        const rel = rels.get(a.targetEntityTypeKey)!.get(a.relationKey);
        if (!rel)
          throw bad(
            f('relationKey'),
            `names a relation entity type ${a.targetEntityTypeKey} does not have: ${a.relationKey}`,
          );
        if (!rel.subject_entity_type_keys.includes(a.subjectEntityTypeKey)) {
          const known = (await store.entityTypes(t, { keys: [a.subjectEntityTypeKey] })).length > 0;
          throw bad(
            f('subjectEntityTypeKey'),
            known
              ? `${a.subjectEntityTypeKey} may not hold relation ${a.relationKey} (allowed: ${rel.subject_entity_type_keys.join(', ')})`
              : `names an unknown entity type: ${a.subjectEntityTypeKey}`,
          );
        }
        rows.push({
          ...keyOf(a),
          active_from: from === null ? null : new Date(from),
          active_until: until === null ? null : new Date(until),
        });
      }
      const out = [];
      for (const r of rows) out.push(dto(await store.upsertAssignment(t, r)));
      return out;
    });
  /** Removes each assignment by its five keys (windows are not compared); one that does not exist is skipped. */
  const unassign = (list: Assignment[]) =>
    tx(async (t) => {
      for (const [i, a] of list.entries()) {
        if (a.activeFrom && a.activeUntil && Date.parse(a.activeUntil) <= Date.parse(a.activeFrom))
          throw bad(`assignments[${i}].activeUntil`, 'must be after activeFrom');
        await store.deleteAssignment(t, keyOf(a));
      }
    });
  /** May the subject do the action on the target? An active assignment with a relation the action lists. */
  async function check(
    b: CheckBody,
  ): Promise<{ result: boolean; justification?: Justification; relationKey?: string }> {
    const now = b.at ? Date.parse(b.at) : Date.now();
    const [action] = await store.actions(db, b.targetEntityTypeKey, [b.action]);
    if (!action) return { result: false, justification: 'MISSING_ACTION' };
    const found = await store.linking(
      db,
      { type: b.subjectEntityTypeKey, key: b.subjectKey },
      { type: b.targetEntityTypeKey, key: b.targetKey },
      action.relation_keys,
    );
    const ms = (d: Date | null) => (d === null ? null : new Date(d).getTime());
    const active = found.find((a) => (ms(a.active_from) ?? -Infinity) <= now && now < (ms(a.active_until) ?? Infinity));
    if (active) return { result: true, relationKey: active.relation_key };
    return { result: false, justification: found.length ? 'RELATION_NOT_ACTIVE' : 'MISSING_RELATION' };
  }
  return { listAssignments: list, assign, unassign, check };
}
