import { Type, type Static, type TSchema } from 'typebox';
import { PageEnvelopeOf } from '../../http/paging.ts';

export const BUILT_IN_ID = '00000000-0000-4000-8000-00000000b001';
/** Placeholder answered for a stored secret; sending it back in an update keeps the stored secret. */
export const MASK = '********';

const Str = (max = 2048) => Type.String({ minLength: 1, maxLength: max });
const Secret = Type.String({ minLength: 1, maxLength: 16384, description: `stored sealed; answered as ${MASK}` });
/** Which account users of the source land in (dynamic, static, new, from the source): stored as given. */
const TenantConfig = Type.Object(
  {},
  {
    additionalProperties: true,
    description: 'how the account of a user from this source is chosen; stored and answered as given',
  },
);
const common = { syncOnLogin: Type.Boolean(), tenantConfig: TenantConfig };

/** The configuration schema of each external type and which of its fields are secrets. */
export const TYPES: Record<string, { schema: TSchema; secrets: string[] }> = {
  auth0: {
    schema: Type.Object({
      ...common,
      isMigrated: Type.Boolean(),
      domain: Str(255),
      clientId: Str(255),
      secret: Secret,
    }),
    secrets: ['secret'],
  },
  cognito: {
    schema: Type.Object({
      ...common,
      isMigrated: Type.Boolean(),
      region: Str(64),
      clientId: Str(255),
      userPoolId: Str(255),
      accessKeyId: Str(255),
      secretAccessKey: Secret,
      clientSecret: Type.Optional(Secret),
    }),
    secrets: ['secretAccessKey', 'clientSecret'],
  },
  firebase: {
    schema: Type.Object({
      ...common,
      isMigrated: Type.Boolean(),
      apiKey: Secret,
      serviceAccount: Type.Object({}, { additionalProperties: true }),
    }),
    secrets: ['apiKey', 'serviceAccount'],
  },
  'custom-code': {
    schema: Type.Object({
      ...common,
      isMigrated: Type.Boolean(),
      codePayload: Str(100_000),
      getUserCodePayload: Type.Optional(Str(100_000)),
    }),
    secrets: [],
  },
  federation: {
    schema: Type.Object({
      ...common,
      wellknownUrl: Type.Optional(Type.String({ maxLength: 2048, pattern: '^https?://\\S+$' })),
      oauth2Config: Type.Optional(Type.Object({}, { additionalProperties: true })),
      clientId: Str(255),
      secret: Secret,
    }),
    secrets: ['secret'],
  },
};

const fields = {
  name: Type.String({ minLength: 1, maxLength: 255 }),
  description: Type.String({ maxLength: 4096 }),
  index: Type.Integer({ minimum: 0, maximum: 1_000_000 }),
};

export function createBody(type: string) {
  return Type.Object({
    name: fields.name,
    configuration: TYPES[type].schema,
    appIds: Type.Optional(Type.Array(Type.String({ maxLength: 64 }), { maxItems: 500, uniqueItems: true })),
    index: fields.index,
    description: Type.Optional(fields.description),
  });
}
export function updateBody(type: string) {
  return Type.Object({
    name: Type.Optional(fields.name),
    configuration: Type.Optional(TYPES[type].schema),
    index: Type.Optional(fields.index),
    description: Type.Optional(fields.description),
  });
}
export interface SourceBody {
  name?: string;
  configuration?: Record<string, unknown>;
  appIds?: string[];
  index?: number;
  description?: string;
}

export const UserSource = Type.Object({
  id: Type.String(),
  name: Type.String(),
  type: Type.String({
    description: 'gatehouse (the built-in pool), auth0, cognito, firebase, custom-code or federation',
  }),
  description: Type.String(),
  appIds: Type.Array(Type.String()),
  index: Type.Integer(),
  configuration: Type.Object({}, { additionalProperties: true }),
  usersCount: Type.Optional(Type.Integer()),
});
export type UserSource = Static<typeof UserSource>;
export const CreatedSource = Type.Object({
  id: Type.String(),
  name: Type.String(),
  type: Type.String(),
  appIds: Type.Array(Type.String()),
  description: Type.String(),
  index: Type.Integer(),
});
export const AssignBody = Type.Object({
  appIds: Type.Array(Type.String({ maxLength: 64 }), { minItems: 1, maxItems: 500, uniqueItems: true }),
  userSourceId: Type.String({ minLength: 1, maxLength: 64 }),
});
export const SourceParams = Type.Object({ id: Type.String({ minLength: 1, maxLength: 64 }) });
export const SourceUsersQuery = Type.Object({
  _limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 200, default: 50 })),
  _offset: Type.Optional(Type.Integer({ minimum: 0, maximum: 10_000_000, default: 0, description: 'page index' })),
});

export const Empty = Type.Object({}, { description: 'empty object' });
/** A user of a source as its users page lists it. */
export const SourceUser = Type.Object({
  email: Type.String(),
  lastLogin: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
});
export const SourceUsersPage = PageEnvelopeOf(SourceUser);
