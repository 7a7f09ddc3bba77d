import { AppError } from '../../../http/errors.ts';

/** RFC 7643 schema definitions of the resources Gatehouse serves; they drive /Schemas, filters, paths and checks. */

export const URN = {
  user: 'urn:ietf:params:scim:schemas:core:2.0:User',
  group: 'urn:ietf:params:scim:schemas:core:2.0:Group',
  enterprise: 'urn:ietf:params:scim:schemas:extension:enterprise:2.0:User',
  list: 'urn:ietf:params:scim:api:messages:2.0:ListResponse',
  patch: 'urn:ietf:params:scim:api:messages:2.0:PatchOp',
  search: 'urn:ietf:params:scim:api:messages:2.0:SearchRequest',
  error: 'urn:ietf:params:scim:api:messages:2.0:Error',
  spc: 'urn:ietf:params:scim:schemas:core:2.0:ServiceProviderConfig',
  resourceType: 'urn:ietf:params:scim:schemas:core:2.0:ResourceType',
  schema: 'urn:ietf:params:scim:schemas:core:2.0:Schema',
} as const;

export type AttrType = 'string' | 'boolean' | 'decimal' | 'integer' | 'dateTime' | 'reference' | 'complex' | 'binary';

export interface Attr {
  name: string;
  type: AttrType;
  multiValued: boolean;
  required: boolean;
  caseExact: boolean;
  mutability: 'readOnly' | 'readWrite' | 'immutable' | 'writeOnly';
  returned: 'always' | 'never' | 'default' | 'request';
  uniqueness: 'none' | 'server' | 'global';
  description: string;
  subAttributes?: Attr[];
  canonicalValues?: string[];
  referenceTypes?: string[];
}

function a(name: string, type: AttrType, o: Partial<Attr> = {}): Attr {
  return {
    name,
    type,
    multiValued: false,
    required: false,
    caseExact: false,
    mutability: 'readWrite',
    returned: 'default',
    uniqueness: 'none',
    description: name,
    ...o,
  };
}

/** The sub-attributes of the RFC's multi-valued complex attributes (emails, phoneNumbers, ims, photos, ...). */
const multi = (name: string, valueType: AttrType = 'string', types: string[] = [], o: Partial<Attr> = {}): Attr =>
  a(name, 'complex', {
    multiValued: true,
    subAttributes: [
      a('value', valueType, valueType === 'reference' ? { referenceTypes: ['external'] } : {}),
      a('display', 'string'),
      a('type', 'string', types.length ? { canonicalValues: types } : {}),
      a('primary', 'boolean'),
    ],
    ...o,
  });

const ro: Partial<Attr> = { mutability: 'readOnly' };

export const userAttributes: Attr[] = [
  a('userName', 'string', {
    required: true,
    uniqueness: 'server',
    description: 'Unique identifier for the User, typically used by the user to directly authenticate',
  }),
  a('name', 'complex', {
    subAttributes: ['formatted', 'familyName', 'givenName', 'middleName', 'honorificPrefix', 'honorificSuffix'].map(
      (n) => a(n, 'string'),
    ),
  }),
  a('displayName', 'string'),
  a('nickName', 'string'),
  a('profileUrl', 'reference', { referenceTypes: ['external'] }),
  a('title', 'string'),
  a('userType', 'string'),
  a('preferredLanguage', 'string'),
  a('locale', 'string'),
  a('timezone', 'string'),
  a('active', 'boolean'),
  a('password', 'string', { mutability: 'writeOnly', returned: 'never' }),
  multi('emails', 'string', ['work', 'home', 'other']),
  multi('phoneNumbers', 'string', ['work', 'home', 'mobile', 'fax', 'pager', 'other']),
  multi('ims', 'string', ['aim', 'gtalk', 'icq', 'xmpp', 'msn', 'skype', 'qq', 'yahoo']),
  multi('photos', 'reference', ['photo', 'thumbnail']),
  a('addresses', 'complex', {
    multiValued: true,
    subAttributes: [
      ...['formatted', 'streetAddress', 'locality', 'region', 'postalCode', 'country'].map((n) => a(n, 'string')),
      a('type', 'string', { canonicalValues: ['work', 'home', 'other'] }),
      a('primary', 'boolean'),
    ],
  }),
  a('groups', 'complex', {
    multiValued: true,
    mutability: 'readOnly',
    subAttributes: [
      a('value', 'string', ro),
      a('$ref', 'reference', { ...ro, referenceTypes: ['Group'] }),
      a('display', 'string', ro),
      a('type', 'string', { ...ro, canonicalValues: ['direct', 'indirect'] }),
    ],
  }),
  multi('entitlements'),
  multi('roles'),
  multi('x509Certificates', 'binary'),
];

export const enterpriseAttributes: Attr[] = [
  a('employeeNumber', 'string'),
  a('costCenter', 'string'),
  a('organization', 'string'),
  a('division', 'string'),
  a('department', 'string'),
  a('manager', 'complex', {
    subAttributes: [
      a('value', 'string'),
      a('$ref', 'reference', { referenceTypes: ['User'] }),
      a('displayName', 'string', ro),
    ],
  }),
];

export const groupAttributes: Attr[] = [
  a('displayName', 'string', { required: true, description: 'A human-readable name for the Group' }),
  a('members', 'complex', {
    multiValued: true,
    subAttributes: [
      a('value', 'string', { mutability: 'immutable', caseExact: true }),
      a('$ref', 'reference', { mutability: 'immutable', referenceTypes: ['User', 'Group'] }),
      a('display', 'string', ro),
      a('type', 'string', { mutability: 'immutable', canonicalValues: ['User', 'Group'] }),
    ],
  }),
];

/** Attributes every resource has (RFC 7643 section 3.1). */
export const commonAttributes: Attr[] = [
  a('id', 'string', { mutability: 'readOnly', returned: 'always', caseExact: true, uniqueness: 'server' }),
  a('externalId', 'string', { caseExact: true }),
  a('meta', 'complex', {
    mutability: 'readOnly',
    subAttributes: [
      a('resourceType', 'string', ro),
      a('created', 'dateTime', ro),
      a('lastModified', 'dateTime', ro),
      a('location', 'reference', ro),
      a('version', 'string', { ...ro, caseExact: true }),
    ],
  }),
  a('schemas', 'reference', { multiValued: true, caseExact: true, returned: 'always' }),
];

export type ResourceKind = 'User' | 'Group';

export interface ResolvedPath {
  /** '' for core and common attributes, else the extension URN. */
  extension: string;
  attr: Attr;
  sub?: Attr;
  /** Canonical spelling: `name.givenName`, `urn:...:User:manager.value`. */
  canonical: string;
}

const coreUrn = (kind: ResourceKind) => (kind === 'User' ? URN.user : URN.group);
const find = (list: Attr[] | undefined, name: string) => list?.find((x) => x.name.toLowerCase() === name.toLowerCase());

/**
 * Resolves an attribute path (`userName`, `name.givenName`, `emails.value`, a URN-prefixed one) against the schema of
 * `kind`, case-insensitively as RFC 7643 section 2.1 says. Undefined when it names nothing.
 */
export function resolvePath(kind: ResourceKind, path: string): ResolvedPath | undefined {
  let rest = path;
  let extension = '';
  const lower = path.toLowerCase();
  const core = coreUrn(kind).toLowerCase();
  if (lower.startsWith(`${core}:`)) rest = path.slice(core.length + 1);
  else if (kind === 'User' && lower.startsWith(URN.enterprise.toLowerCase())) {
    extension = URN.enterprise;
    rest = path.slice(URN.enterprise.length + 1);
    if (path.length === URN.enterprise.length)
      return {
        extension,
        attr: a(URN.enterprise, 'complex', { subAttributes: enterpriseAttributes }),
        canonical: URN.enterprise,
      };
  } else if (lower.startsWith('urn:')) return undefined;
  const [head, sub, ...more] = rest.split('.');
  if (more.length || !head) return undefined;
  const list = extension
    ? enterpriseAttributes
    : [...commonAttributes, ...(kind === 'User' ? userAttributes : groupAttributes)];
  const attr = find(list, head);
  if (!attr) return undefined;
  if (sub === undefined) return { extension, attr, canonical: extension ? `${extension}:${attr.name}` : attr.name };
  const subAttr = find(attr.subAttributes, sub);
  if (!subAttr) return undefined;
  return {
    extension,
    attr,
    sub: subAttr,
    canonical: `${extension ? `${extension}:` : ''}${attr.name}.${subAttr.name}`,
  };
}

export function requirePath(
  kind: ResourceKind,
  path: string,
  code: 'SCIM_INVALID_PATH' | 'SCIM_INVALID_FILTER' = 'SCIM_INVALID_PATH',
): ResolvedPath {
  const r = resolvePath(kind, path);
  if (!r) throw new AppError(code, `Attribute path "${path}" names no attribute of the ${kind} schema`);
  return r;
}

function schemaDoc(id: string, name: string, description: string, attributes: Attr[], base: string) {
  return {
    schemas: [URN.schema],
    id,
    name,
    description,
    attributes,
    meta: { resourceType: 'Schema', location: `${base}/Schemas/${id}` },
  };
}

export function schemaDocs(base: string) {
  return [
    schemaDoc(URN.user, 'User', 'User Account', userAttributes, base),
    schemaDoc(URN.enterprise, 'EnterpriseUser', 'Enterprise User', enterpriseAttributes, base),
    schemaDoc(URN.group, 'Group', 'Group', groupAttributes, base),
  ];
}

export function resourceTypeDocs(base: string) {
  return [
    {
      schemas: [URN.resourceType],
      id: 'User',
      name: 'User',
      endpoint: '/Users',
      description: 'User Account',
      schema: URN.user,
      schemaExtensions: [{ schema: URN.enterprise, required: false }],
      meta: { resourceType: 'ResourceType', location: `${base}/ResourceTypes/User` },
    },
    {
      schemas: [URN.resourceType],
      id: 'Group',
      name: 'Group',
      endpoint: '/Groups',
      description: 'Group',
      schema: URN.group,
      schemaExtensions: [],
      meta: { resourceType: 'ResourceType', location: `${base}/ResourceTypes/Group` },
    },
  ];
}

export function serviceProviderConfig(base: string, maxResults: number, bodyLimit: number) {
  return {
    schemas: [URN.spc],
    documentationUri: 'https://datatracker.ietf.org/doc/html/rfc7644',
    patch: { supported: true },
    bulk: { supported: false, maxOperations: 0, maxPayloadSize: bodyLimit },
    filter: { supported: true, maxResults },
    changePassword: { supported: false },
    sort: { supported: true },
    etag: { supported: true },
    authenticationSchemes: [
      {
        type: 'oauthbearertoken',
        name: 'Bearer token',
        description: 'The token returned when the SCIM connection was created (or its token rotated)',
        primary: true,
      },
    ],
    meta: { resourceType: 'ServiceProviderConfig', location: `${base}/ServiceProviderConfig` },
  };
}
