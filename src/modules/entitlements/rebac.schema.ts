import { Type, type Static } from 'typebox';

/**
 * ReBAC bodies, queries and answers (routes.md: entity-types/v1 and relations/v1; the check is Gatehouse's own).
 * Type, relation and action keys are slugs or dotted keys; subject and target keys are any identifier without spaces.
 */
const KEY_PATTERN = '^[A-Za-z0-9_-]+(\\.[A-Za-z0-9_-]+)*$';
const TypeKey = Type.String({
  minLength: 1,
  maxLength: 255,
  pattern: KEY_PATTERN,
  description: 'letters, digits, _ and -, in dot-separated segments',
});
const EntityKey = Type.String({
  minLength: 1,
  maxLength: 255,
  pattern: '^[^\\s]+$',
  description: 'the entity id (a user id, a document id): no spaces',
});
const Description = Type.String({ maxLength: 4096 });
const Iso = Type.String({ format: 'date-time' });

export const PageQuery = Type.Object({
  offset: Type.Optional(Type.Integer({ minimum: 0, default: 0, description: 'items to skip' })),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000, default: 50 })),
});
export type PageQuery = Static<typeof PageQuery>;
export const AssignmentQuery = Type.Object({
  ...PageQuery.properties,
  subjectEntityTypeKey: Type.Optional(TypeKey),
  subjectKey: Type.Optional(EntityKey),
  relationKey: Type.Optional(TypeKey),
  targetEntityTypeKey: Type.Optional(TypeKey),
  targetKey: Type.Optional(EntityKey),
});
export type AssignmentQuery = Static<typeof AssignmentQuery>;
export const TypeParams = Type.Object({ key: TypeKey });
export const ActionParams = Type.Object({ key: TypeKey, actionKey: TypeKey });
export const RelationParams = Type.Object({ key: TypeKey, relationKey: TypeKey });

export const CreateEntityType = Type.Object({ key: TypeKey, description: Type.Optional(Description) });
export const UpdateEntityType = Type.Object(
  { key: TypeKey, description: Type.Optional(Description) },
  { description: 'a different key renames the type everywhere' },
);
export type EntityTypeInput = Static<typeof CreateEntityType>;

const ActionInput = Type.Object({
  key: TypeKey,
  relationKeys: Type.Array(TypeKey, { maxItems: 100, description: 'relations of this type that grant the action' }),
});
export type ActionInput = Static<typeof ActionInput>;
export const CreateActions = Type.Object({ actions: Type.Array(ActionInput, { minItems: 1, maxItems: 100 }) });
export const UpdateAction = ActionInput;
const RelationInput = Type.Object({
  key: TypeKey,
  subjectEntityKeys: Type.Array(TypeKey, {
    minItems: 1,
    maxItems: 100,
    description: 'entity types that may hold the relation',
  }),
});
export type RelationInput = Static<typeof RelationInput>;
export const CreateRelations = Type.Object({ relations: Type.Array(RelationInput, { minItems: 1, maxItems: 100 }) });
export const UpdateRelation = RelationInput;

const assignmentFields = {
  subjectEntityTypeKey: TypeKey,
  subjectKey: EntityKey,
  relationKey: TypeKey,
  targetEntityTypeKey: TypeKey,
  targetKey: EntityKey,
  activeFrom: Type.Optional(Iso),
  activeUntil: Type.Optional(Type.String({ format: 'date-time', description: 'exclusive; after activeFrom' })),
};
export const Assignment = Type.Object(assignmentFields);
export type Assignment = Static<typeof Assignment>;
export const AssignBody = Type.Object({ assignments: Type.Array(Assignment, { minItems: 1, maxItems: 1000 }) });
export const CheckBody = Type.Object({
  subjectEntityTypeKey: TypeKey,
  subjectKey: EntityKey,
  action: TypeKey,
  targetEntityTypeKey: TypeKey,
  targetKey: EntityKey,
  at: Type.Optional(Type.String({ format: 'date-time', description: 'the instant to decide for (default now)' })),
});
export type CheckBody = Static<typeof CheckBody>;

// -- answers --
const PageOf = <T extends Parameters<typeof Type.Array>[0]>(item: T) =>
  Type.Object({ items: Type.Array(item), hasNext: Type.Boolean() });
export const EntityTypeDto = Type.Object({ key: Type.String(), description: Type.String(), createdAt: Iso });
export const EntityTypePage = PageOf(EntityTypeDto);
export const EntityTypeOneDto = Type.Object({
  ...EntityTypeDto.properties,
  relations: Type.Array(Type.String()),
  actions: Type.Array(Type.String()),
});
export const ActionDto = Type.Object({
  vendorId: Type.String(),
  entityTypeKey: Type.String(),
  key: Type.String(),
  relationKeys: Type.Array(Type.String()),
});
export const RelationDto = Type.Object({
  vendorId: Type.String(),
  targetEntityTypeKey: Type.String(),
  key: Type.String(),
  subjectEntityTypeKeys: Type.Array(Type.String()),
});
export const AssignmentDto = Type.Object({
  subjectEntityTypeKey: Type.String(),
  subjectKey: Type.String(),
  relationKey: Type.String(),
  targetEntityTypeKey: Type.String(),
  targetKey: Type.String(),
  activeFrom: Type.Optional(Iso),
  activeUntil: Type.Optional(Iso),
});
export const AssignmentPage = PageOf(AssignmentDto);
export const CheckAnswer = Type.Object({
  result: Type.Boolean(),
  justification: Type.Optional(
    Type.Union(
      [Type.Literal('MISSING_ACTION'), Type.Literal('MISSING_RELATION'), Type.Literal('RELATION_NOT_ACTIVE')],
      {
        description:
          'when false: MISSING_ACTION (no such action on the target type), MISSING_RELATION (no assignment with a granting relation), RELATION_NOT_ACTIVE (only assignments outside their window)',
      },
    ),
  ),
  relationKey: Type.Optional(Type.String({ description: 'when true: the relation that grants the action' })),
});
export const NoContent = (description: string) => Type.Null({ description });
