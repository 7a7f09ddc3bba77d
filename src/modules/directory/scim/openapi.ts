import { Type, type TSchema } from 'typebox';
import { enterpriseAttributes, groupAttributes, URN, userAttributes, type Attr } from './schemas.ts';

/**
 * The answers of the SCIM 2.0 routes for the OpenAPI document, built from the same RFC 7643 attribute definitions that
 * drive /Schemas, filters and paths. They are declared under `application/scim+json` only: the handlers' objects are
 * serialised as `application/json` (JSON.stringify, no schema: a resource carries whatever the directory stored) and the
 * plugin's onSend hook renames the content type, so these schemas document the answers and never filter them.
 * Every object is open (`additionalProperties`): `attributes`/`excludedAttributes` project resources, and an
 * extension schema adds its own URN-named object.
 */

const open = { additionalProperties: true } as const;

function attrSchema(attr: Attr): TSchema {
  const description = attr.description !== attr.name ? attr.description : undefined;
  // A sub-attribute named `$ref` cannot be a property of the document (schema tools read it as a reference): such
  // objects say so in their description instead; they are open, so the answer keeps it.
  const subs = attr.subAttributes ?? [];
  const hasRef = subs.some((s) => s.name === '$ref');
  const one: TSchema =
    attr.type === 'complex'
      ? Type.Object(
          Object.fromEntries(subs.filter((s) => s.name !== '$ref').map((s) => [s.name, Type.Optional(attrSchema(s))])),
          { ...open, ...(hasRef ? { description: 'also `$ref`: the URI of the referenced resource' } : {}) },
        )
      : attr.type === 'boolean'
        ? Type.Boolean()
        : attr.type === 'integer'
          ? Type.Integer()
          : attr.type === 'decimal'
            ? Type.Number()
            : Type.String(attr.type === 'dateTime' ? { format: 'date-time' } : {});
  if (attr.multiValued) return Type.Array(one, description ? { description } : {});
  return description ? { ...one, description } : one;
}

/** Optional properties of the attributes the service answers (`returned: never`, e.g. password, is left out). */
const props = (attrs: Attr[]) =>
  Object.fromEntries(attrs.filter((a) => a.returned !== 'never').map((a) => [a.name, Type.Optional(attrSchema(a))]));

const Meta = Type.Object(
  {
    resourceType: Type.String(),
    created: Type.Optional(Type.String({ format: 'date-time' })),
    lastModified: Type.Optional(Type.String({ format: 'date-time' })),
    location: Type.String(),
    version: Type.Optional(Type.String({ description: 'weak entity tag, also sent as the ETag header' })),
  },
  open,
);

const common = {
  schemas: Type.Array(Type.String(), { description: 'schema URNs of the resource' }),
  id: Type.String(),
  externalId: Type.Optional(Type.String()),
};

export const ScimUser = Type.Object(
  {
    ...common,
    ...props(userAttributes),
    [URN.enterprise]: Type.Optional(
      Type.Object(props(enterpriseAttributes), { ...open, description: 'enterprise extension' }),
    ),
    meta: Type.Optional(Meta),
  },
  { ...open, description: `${URN.user} resource (attributes / excludedAttributes may leave fields out)` },
);

export const ScimGroup = Type.Object(
  {
    ...common,
    ...props(groupAttributes),
    meta: Type.Optional(Meta),
  },
  { ...open, description: `${URN.group} resource (attributes / excludedAttributes may leave fields out)` },
);

const listOf = (item: TSchema) =>
  Type.Object(
    {
      schemas: Type.Array(Type.String(), { description: URN.list }),
      totalResults: Type.Integer(),
      startIndex: Type.Integer(),
      itemsPerPage: Type.Integer(),
      Resources: Type.Array(item),
    },
    open,
  );

const Supported = Type.Object({ supported: Type.Boolean() }, open);
export const ServiceProviderConfig = Type.Object(
  {
    schemas: Type.Array(Type.String()),
    documentationUri: Type.String(),
    patch: Supported,
    bulk: Type.Object(
      { supported: Type.Boolean(), maxOperations: Type.Integer(), maxPayloadSize: Type.Integer() },
      open,
    ),
    filter: Type.Object({ supported: Type.Boolean(), maxResults: Type.Integer() }, open),
    changePassword: Supported,
    sort: Supported,
    etag: Supported,
    authenticationSchemes: Type.Array(
      Type.Object(
        { type: Type.String(), name: Type.String(), description: Type.String(), primary: Type.Boolean() },
        open,
      ),
    ),
    meta: Meta,
  },
  { ...open, description: URN.spc },
);

export const ResourceType = Type.Object(
  {
    schemas: Type.Array(Type.String()),
    id: Type.String(),
    name: Type.String(),
    endpoint: Type.String(),
    description: Type.String(),
    schema: Type.String(),
    schemaExtensions: Type.Array(Type.Object({ schema: Type.String(), required: Type.Boolean() }, open)),
    meta: Meta,
  },
  { ...open, description: URN.resourceType },
);

const SchemaAttribute = Type.Object(
  {
    name: Type.String(),
    type: Type.String(),
    multiValued: Type.Boolean(),
    required: Type.Boolean(),
    caseExact: Type.Boolean(),
    mutability: Type.String(),
    returned: Type.String(),
    uniqueness: Type.String(),
    description: Type.String(),
    subAttributes: Type.Optional(Type.Array(Type.Object({}, { ...open, description: 'an attribute definition' }))),
    canonicalValues: Type.Optional(Type.Array(Type.String())),
    referenceTypes: Type.Optional(Type.Array(Type.String())),
  },
  open,
);
export const SchemaDoc = Type.Object(
  {
    schemas: Type.Array(Type.String()),
    id: Type.String(),
    name: Type.String(),
    description: Type.String(),
    attributes: Type.Array(SchemaAttribute),
    meta: Meta,
  },
  { ...open, description: URN.schema },
);

export const ScimUserList = listOf(ScimUser);
export const ScimGroupList = listOf(ScimGroup);
export const ResourceTypeList = listOf(ResourceType);
export const SchemaList = listOf(SchemaDoc);

/** A `application/scim+json` answer: documented, never serialised by Fastify (see the top of this file). */
export const scimJson = (description: string, schema: TSchema) => ({
  description,
  content: { 'application/scim+json': { schema } },
});
export const NoContent = (description: string) => Type.Null({ description });
