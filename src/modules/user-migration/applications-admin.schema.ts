import { Type, type Static } from 'typebox';
import { ACCESS_TYPES, CreateApplication } from './schema.ts';

/** Schemas of the application management routes (get/update/delete, account assignments, credentials, clients). */

export const AppIdParams = Type.Object({ id: Type.String({ maxLength: 64 }) });
export const AssignmentAppParams = Type.Object({ appId: Type.String({ maxLength: 64 }) });
export const AssignmentParams = Type.Object({
  appId: Type.String({ maxLength: 64 }),
  tenantId: Type.String({ minLength: 1, maxLength: 255 }),
});

/** PATCH: any field of the create body; at least one. */
export const UpdateApplication = Type.Partial(CreateApplication, { minProperties: 1 });
export type UpdateApplication = Static<typeof UpdateApplication>;

const AccessType = Type.Enum(ACCESS_TYPES);
/** Comma lists (or the parameter repeated). */
const IdList = Type.Optional(Type.Array(Type.String({ maxLength: 4000 }), { maxItems: 100 }));
export const AssignmentsQuery = Type.Object({
  appIds: IdList,
  tenantIds: IdList,
  accessType: Type.Optional(AccessType),
});
export type AssignmentsQuery = Static<typeof AssignmentsQuery>;
export const TenantHeaders = Type.Object({
  'gatehouse-tenant-id': Type.Optional(
    Type.String({
      maxLength: 255,
      description: 'restricts the answer to this account (a user token: always its own account)',
    }),
  ),
});

export const CreateAssignment = Type.Object({
  tenantId: Type.String({ minLength: 1, maxLength: 255 }),
  accessType: Type.Optional(Type.Enum(ACCESS_TYPES, { description: "default: the application's access type" })),
});
export const EditAssignment = Type.Object({ accessType: AccessType });
export const TenantApps = Type.Object({ tenantId: Type.String(), appIds: Type.Array(Type.String()) });
export const TenantAssignmentsV2 = Type.Object({
  tenantId: Type.String(),
  assignments: Type.Array(Type.Object({ appId: Type.String(), accessType: AccessType })),
});
export const AppTenants = Type.Object({ tenantIds: Type.Array(Type.String()) });
export const Assignment = Type.Object({
  appId: Type.String(),
  tenantId: Type.String(),
  accessType: AccessType,
  createdAt: Type.String(),
  updatedAt: Type.String(),
});

export const ActiveTenant = Type.Object({
  applicationId: Type.String({ maxLength: 64 }),
  tenantId: Type.String({ minLength: 1, maxLength: 255 }),
});
export const ActiveTenantsBody = Type.Object({
  activeApplicationTenants: Type.Array(ActiveTenant, { minItems: 1, maxItems: 100 }),
});
export type ActiveTenantsBody = Static<typeof ActiveTenantsBody>;
export const ActiveTenants = Type.Object({
  applicationActiveTenants: Type.Array(Type.Object({ applicationId: Type.String(), tenantId: Type.String() })),
});
export const UserHeaders = Type.Object({
  'gatehouse-user-id': Type.Optional(
    Type.String({ maxLength: 64, description: 'required with an environment token: the user' }),
  ),
});

export const AppsUsersQuery = Type.Object({
  appIds: Type.Array(Type.String({ maxLength: 4000 }), {
    minItems: 1,
    maxItems: 100,
    description: 'application ids, comma list or repeated',
  }),
});
export const UsersAppsQuery = Type.Object({
  userIds: Type.Array(Type.String({ maxLength: 4000 }), {
    minItems: 1,
    maxItems: 100,
    description: 'user ids, comma list or repeated',
  }),
});
export const AppUsers = Type.Object({ appId: Type.String(), userIds: Type.Array(Type.String()) });
export const UserApps = Type.Object({ userId: Type.String(), appIds: Type.Array(Type.String()) });

/** Credentials: the client id is the application id; a secret is whole once (on generation), else a masked hint. */
export const Credentials = Type.Object({
  appId: Type.String(),
  clientId: Type.String(),
  clientSecret: Type.String({
    description: 'whole only in the answer that generated it; otherwise masked (`****` + last 4), empty when none',
  }),
  sharedSecret: Type.String({ description: 'as clientSecret' }),
  clientSecretCreatedAt: Type.Union([Type.String(), Type.Null()]),
  sharedSecretCreatedAt: Type.Union([Type.String(), Type.Null()]),
});
export const CredentialsParams = Type.Object({ appId: Type.String({ maxLength: 64 }) });
export const RegenerateBody = Type.Object({ appId: Type.String({ maxLength: 64 }) });

const RedirectUrl = Type.String({
  minLength: 1,
  maxLength: 2048,
  pattern: '^[A-Za-z][A-Za-z0-9+.-]*://[^\\s]+$',
  description: 'an absolute URL (scheme://...)',
});
const ExternalMetadata = Type.Object(
  {},
  { additionalProperties: true, maxProperties: 100, description: 'a JSON object' },
);
export const CLIENT_TYPES = ['Agent'] as const;
export const CreateClient = Type.Object({
  appId: Type.Optional(
    Type.String({ maxLength: 64, description: 'the application (else the gatehouse-application-id header)' }),
  ),
  clientName: Type.String({ minLength: 1, maxLength: 255 }),
  clientType: Type.Enum(CLIENT_TYPES),
  redirectURLs: Type.Optional(Type.Array(RedirectUrl, { maxItems: 50, uniqueItems: true })),
  externalMetadata: Type.Optional(ExternalMetadata),
});
export type CreateClient = Static<typeof CreateClient>;
export const UpdateClient = Type.Object(
  {
    clientName: Type.Optional(Type.String({ minLength: 1, maxLength: 255 })),
    redirectURLs: Type.Optional(Type.Array(RedirectUrl, { maxItems: 50, uniqueItems: true })),
    externalMetadata: Type.Optional(ExternalMetadata),
  },
  { minProperties: 1 },
);
export type UpdateClient = Static<typeof UpdateClient>;
export const ApplicationHeaders = Type.Object({
  'gatehouse-application-id': Type.Optional(Type.String({ maxLength: 64 })),
});
export const Client = Type.Object({
  id: Type.String(),
  appId: Type.String(),
  clientName: Type.String(),
  clientSecret: Type.String({ description: 'whole only in the create answer; otherwise masked (`****` + last 4)' }),
  clientType: Type.String(),
  redirectURLs: Type.Array(Type.String()),
  externalMetadata: Type.Optional(Type.Object({}, { additionalProperties: true })),
  createdAt: Type.String(),
  updatedAt: Type.String(),
});
export const ClientParams = Type.Object({ id: Type.String({ maxLength: 64 }) });
