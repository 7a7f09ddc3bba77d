import { Type, type Static, type TNull, type TString, type TUnion } from 'typebox';
import { AccountFields, CreateAccount, TenantId } from '../tenants/index.ts';

/** Items per migration request (interface.md section 8: accounts per migration batch; users per bulk request). */
export const MAX_MIGRATION_ITEMS = 1000;

export const MigrationState = Type.Union([
  Type.Literal('pending'),
  Type.Literal('running'),
  Type.Literal('completed'),
  Type.Literal('failed'),
]);
export type MigrationState = Static<typeof MigrationState>;

/**
 * The migration status record of wire.md section 6, shared by account and user migrations; `errorKey` names the
 * item's key in an error entry (`id` for accounts, `email` for users). `code` is the catalogue's errorCode (GH-…).
 */
export function migrationStatusSchema<K extends string>(errorKey: K) {
  const key = { [errorKey]: Type.Union([Type.String(), Type.Null()]) } as unknown as Record<
    K,
    TUnion<[TString, TNull]>
  >;
  return Type.Object({
    migrationId: Type.String({ format: 'uuid' }),
    state: MigrationState,
    total: Type.Integer({ description: 'items in the request' }),
    succeeded: Type.Integer({ description: 'items imported so far' }),
    failed: Type.Integer({ description: 'items rejected so far (one entry each in errors)' }),
    errors: Type.Array(
      Type.Object({
        index: Type.Integer({ description: '0-based position of the item in the request' }),
        ...key,
        code: Type.String({ description: 'errorCode of the error catalogue, as in error bodies' }),
        message: Type.String(),
      }),
    ),
    createdAt: Type.String({ format: 'date-time' }),
    startedAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
    completedAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
  });
}

export const AccountMigrationStatus = migrationStatusSchema('id');

export const MigrationCreated = Type.Object({ migrationId: Type.String({ format: 'uuid' }) });

/** Any string: a malformed id is a 404 like an unknown one, never a 400 or a 500. */
export const MigrationParams = Type.Object({ migrationId: Type.String() });

/**
 * A request item is a tenant id or an object of account fields. Objects are accepted loosely here and checked one by
 * one in the job (against `MigratedAccount`), so that one bad item is an error entry instead of a rejected batch.
 */
export const AccountMigrationItem = Type.Union([
  Type.String({ description: 'a tenant id; the name defaults to it' }),
  Type.Object(
    {},
    {
      additionalProperties: true,
      description: 'account fields as for POST /tenants/resources/tenants/v1, tenantId required; checked per item',
    },
  ),
]);

export const MigrateAccountsBody = Type.Object({
  tenants: Type.Array(AccountMigrationItem, { minItems: 1, maxItems: MAX_MIGRATION_ITEMS }),
});
export type MigrateAccountsBody = Static<typeof MigrateAccountsBody>;

/** One migrated account, as the job checks it: CreateAccount with tenantId required and name optional. */
export const MigratedAccount = Type.Object({
  ...CreateAccount.properties,
  tenantId: TenantId,
  name: Type.Optional(AccountFields.name),
});
export type MigratedAccount = Static<typeof MigratedAccount>;
