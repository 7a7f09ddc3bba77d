import { Type, type Static } from 'typebox';

export const SOURCES = ['gatehouse', 'okta', 'azure-ad', 'other'] as const;
const Metadata = Type.Object({}, { additionalProperties: true, description: 'free-form JSON object' });

export const CreateConnection = Type.Object({
  source: Type.Union(SOURCES.map((s) => Type.Literal(s))),
  connectionName: Type.Optional(Type.String({ maxLength: 255 })),
  syncToUserManagement: Type.Optional(Type.Boolean({ description: 'default true' })),
  metadata: Type.Optional(Metadata),
});
export type CreateConnection = Static<typeof CreateConnection>;

export const UpdateConnection = Type.Object({
  syncToUserManagement: Type.Optional(Type.Boolean()),
  metadata: Type.Optional(Metadata),
  connectionName: Type.Optional(Type.String({ maxLength: 255 })),
});
export type UpdateConnection = Static<typeof UpdateConnection>;

export const DeleteConnection = Type.Object({
  deleteAll: Type.Optional(
    Type.Boolean({ description: 'also remove the users the connection provisioned from the account' }),
  ),
});

export const ConnectionParams = Type.Object({ id: Type.String({ maxLength: 64 }) });

export const ListConnectionsQuery = Type.Object({
  tenantId: Type.Optional(Type.String({ maxLength: 255 })),
  source: Type.Optional(Type.String({ maxLength: 64 })),
  connectionName: Type.Optional(Type.String({ maxLength: 255 })),
  id: Type.Optional(Type.String({ maxLength: 64 })),
});

export const CreatedConnection = Type.Object({
  id: Type.String(),
  connectionName: Type.String(),
  token: Type.String(),
});

export const Connection = Type.Object({
  id: Type.String(),
  tenantId: Type.String(),
  connectionName: Type.String(),
  source: Type.String(),
  syncToUserManagement: Type.Boolean(),
  syncStatus: Type.Object({
    state: Type.Union(
      [
        Type.Literal('idle'),
        Type.Literal('pending'),
        Type.Literal('running'),
        Type.Literal('completed'),
        Type.Literal('failed'),
      ],
      {
        description:
          'the latest sync into user management (started by switching syncToUserManagement on): idle when none is on record',
      },
    ),
    processed: Type.Integer({ description: 'directory users put into user management by that sync so far' }),
    requestedAt: Type.Optional(Type.String({ format: 'date-time' })),
    completedAt: Type.Optional(Type.Union([Type.String({ format: 'date-time' }), Type.Null()])),
  }),
  lastSync: Type.String({ format: 'date-time' }),
  createdAt: Type.String({ format: 'date-time' }),
  metadata: Metadata,
});

export const GroupMappings = Type.Object({
  mappings: Type.Array(
    Type.Object({
      group: Type.String({ minLength: 1, maxLength: 255, description: 'SCIM Group displayName (case-insensitive)' }),
      roleIds: Type.Array(Type.String({ maxLength: 64 }), { maxItems: 100 }),
    }),
    { maxItems: 500 },
  ),
});
export type GroupMappings = Static<typeof GroupMappings>;

export const NoContent = Type.Null({ description: 'no content' });
