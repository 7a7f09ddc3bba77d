/**
 * The error catalogue: every failure a client can see, with its HTTP status, its stable `errorCode` and a default
 * message. Services throw `new AppError('CODE', 'message naming the field and the rule')`; the HTTP layer turns it
 * into the wire body `{errors: [message], errorCode, context?}`. No Fastify here, so services may import it.
 */
export const catalogue = {
  INTERNAL: { status: 500, errorCode: 'GH-10000', message: 'Internal server error' },
  VALIDATION: { status: 400, errorCode: 'GH-10001', message: 'Invalid input' },
  ROUTE_NOT_FOUND: { status: 404, errorCode: 'GH-10002', message: 'Route not found' },
  BODY_TOO_LARGE: { status: 413, errorCode: 'GH-10003', message: 'Request body is too large' },
  UNSUPPORTED_MEDIA_TYPE: { status: 415, errorCode: 'GH-10004', message: 'Request body must be application/json' },
  INVALID_JSON: { status: 400, errorCode: 'GH-10005', message: 'Request body is not valid JSON' },
  RATE_LIMITED: { status: 429, errorCode: 'GH-10006', message: 'Too many requests' },
  SHUTTING_DOWN: { status: 503, errorCode: 'GH-10007', message: 'Server is shutting down' },
  CONFLICT: { status: 409, errorCode: 'GH-10008', message: 'The request conflicts with the current state' },

  UNAUTHENTICATED: { status: 401, errorCode: 'GH-20001', message: 'Authorization header with a bearer token is required' },
  INVALID_TOKEN: { status: 401, errorCode: 'GH-20002', message: 'Token is invalid or expired' },
  WRONG_TOKEN_KIND: { status: 403, errorCode: 'GH-20003', message: 'This route does not accept this kind of token' },
  MISSING_PERMISSION: { status: 403, errorCode: 'GH-20004', message: 'The user lacks the permission this route needs' },
  BAD_CREDENTIALS: { status: 401, errorCode: 'GH-20005', message: 'Invalid client id or secret' },
  TENANT_HEADER_REQUIRED: { status: 400, errorCode: 'GH-20006', message: 'Header gatehouse-tenant-id is required with an environment token' },
  SCOPE_DENIED: { status: 403, errorCode: 'GH-20007', message: 'The credential scopes do not cover this route' },
  CREDENTIAL_NOT_FOUND: { status: 404, errorCode: 'GH-20008', message: 'Credential not found' },
  KEY_NOT_FOUND: { status: 404, errorCode: 'GH-20009', message: 'Signing key not found' },

  ACCOUNT_NOT_FOUND: { status: 404, errorCode: 'GH-30001', message: 'Account not found' },
  ACCOUNT_EXISTS: { status: 409, errorCode: 'GH-30002', message: 'An account with this id already exists' },
  HIERARCHY_CYCLE: { status: 409, errorCode: 'GH-30003', message: 'This assignment would create a cycle in the account hierarchy' },
  NOT_IN_HIERARCHY: { status: 404, errorCode: 'GH-30004', message: 'The account has no parent in the hierarchy' },
  OUTSIDE_HIERARCHY: { status: 403, errorCode: 'GH-30005', message: 'The account is not within your account hierarchy' },
  METADATA_KEY_NOT_FOUND: { status: 404, errorCode: 'GH-30006', message: 'Metadata key not found' },
  MIGRATION_NOT_FOUND: { status: 404, errorCode: 'GH-30007', message: 'Migration not found' },
  EMPTY_UPDATE: { status: 400, errorCode: 'GH-30008', message: 'At least one setting must be given' },
  // -- users (GH-420xx) --
  USER_NOT_FOUND: { status: 404, errorCode: 'GH-42001', message: 'User not found' },
  USER_EXISTS: { status: 409, errorCode: 'GH-42002', message: 'A user with this email already exists' },
  USERNAME_TAKEN: { status: 409, errorCode: 'GH-42003', message: 'This username is taken' },
  PHONE_TAKEN: { status: 409, errorCode: 'GH-42004', message: 'This phone number belongs to another user' },
  NOT_A_MEMBER: { status: 404, errorCode: 'GH-42005', message: 'The user is not a member of this account' },
  ALREADY_MEMBER: { status: 409, errorCode: 'GH-42006', message: 'The user is already a member of this account' },
  TEMPORARY_USERS_DISABLED: { status: 400, errorCode: 'GH-42007', message: 'Temporary users are disabled in this environment' },
  // -- sign-in and sessions (GH-430xx) --
  INVALID_LOGIN: { status: 401, errorCode: 'GH-43001', message: 'Invalid email or password' },
  INVALID_REFRESH_TOKEN: { status: 401, errorCode: 'GH-43002', message: 'Refresh token is invalid or expired' },
  SESSION_REVOKED: { status: 401, errorCode: 'GH-43003', message: 'The session was revoked' },
  NO_ACCOUNT_ACCESS: { status: 403, errorCode: 'GH-43004', message: 'The user has no access to this account' },
  USER_LOCKED: { status: 403, errorCode: 'GH-43005', message: 'The user is locked' },
  SESSION_NOT_FOUND: { status: 404, errorCode: 'GH-43006', message: 'Session not found' },
  // -- roles and permissions (GH-400xx) --
  ROLE_NOT_FOUND: { status: 404, errorCode: 'GH-40001', message: 'Role not found' },
  ROLE_KEY_EXISTS: { status: 409, errorCode: 'GH-40002', message: 'A role with this key already exists in its scope' },
  PERMISSION_NOT_FOUND: { status: 404, errorCode: 'GH-40003', message: 'Permission not found' },
  PERMISSION_KEY_EXISTS: { status: 409, errorCode: 'GH-40004', message: 'A permission with this key already exists' },
  CATEGORY_NOT_FOUND: { status: 404, errorCode: 'GH-40005', message: 'Permission category not found' },
  CATEGORY_EXISTS: { status: 409, errorCode: 'GH-40006', message: 'A permission category with this id or name already exists' },
  UNKNOWN_IDS: { status: 400, errorCode: 'GH-40007', message: 'The body names ids that do not exist or are out of reach' },
  BUILT_IN_PROTECTED: { status: 403, errorCode: 'GH-40008', message: 'Built-in Gatehouse permissions and categories cannot be removed, nor their keys changed' },
  ROLE_NOT_MOVABLE: { status: 409, errorCode: 'GH-40009', message: 'Only an environment role can be moved into an account' },
  PERMISSION_NOT_GRANTABLE: { status: 403, errorCode: 'GH-40010', message: 'The user may not put this permission into a role' },
  // -- credentials and policies (GH-410xx) --
  WEAK_PASSWORD: { status: 400, errorCode: 'GH-41001', message: 'The password does not meet the password policy' },
  POLICY_EXISTS: { status: 409, errorCode: 'GH-41002', message: 'This scope already has its own policy; change it with PATCH' },
  POLICY_NOT_FOUND: { status: 404, errorCode: 'GH-41003', message: 'This scope has no policy of its own' },
  // -- user migration (GH-440xx) --
  HASH_CONFIG_INVALID: { status: 400, errorCode: 'GH-44001', message: 'passwordHashConfig or passwordHash does not fit passwordHashType' },
  UNSUPPORTED_PROVIDER: { status: 400, errorCode: 'GH-44002', message: 'This identity provider is not supported for migration' },
  APPLICATION_NOT_FOUND: { status: 404, errorCode: 'GH-44003', message: 'Application not found' },
  NO_DEFAULT_APPLICATION: { status: 409, errorCode: 'GH-44004', message: 'The environment has no default or auto-assign application' },
  // -- entitlements (GH-500xx) --
  FEATURE_NOT_FOUND: { status: 404, errorCode: 'GH-50001', message: 'Feature not found' },
  FEATURE_KEY_EXISTS: { status: 409, errorCode: 'GH-50002', message: 'A feature with this key already exists' },
  PLAN_NOT_FOUND: { status: 404, errorCode: 'GH-50003', message: 'Plan not found' },
  PLAN_NAME_EXISTS: { status: 409, errorCode: 'GH-50004', message: 'A plan with this name already exists' },
  ENTITLEMENT_NOT_FOUND: { status: 404, errorCode: 'GH-50005', message: 'Entitlement not found' },
  ENTITLEMENT_EXISTS: { status: 409, errorCode: 'GH-50006', message: 'This plan is already granted to this account or user' },
  FEATURE_FLAG_NOT_FOUND: { status: 404, errorCode: 'GH-50007', message: 'Feature flag not found' },
  FEATURE_FLAG_EXISTS: { status: 409, errorCode: 'GH-50008', message: 'This feature already has a feature flag' },
  ROUTE_RULE_NOT_FOUND: { status: 404, errorCode: 'GH-50009', message: 'Route not found' },
  ROUTE_EXISTS: { status: 409, errorCode: 'GH-50010', message: 'A route with this method and path already exists' },
  INVALID_RULES: { status: 400, errorCode: 'GH-50011', message: 'Targeting rules are malformed' },
  // -- hierarchy (GH-301xx) --
  HIERARCHY_TOO_DEEP: { status: 409, errorCode: 'GH-30101', message: 'The account hierarchy would be deeper than the limit' },
  // -- account settings (GH-302xx) --
  // -- account migration (GH-303xx) --
  MIGRATION_DUPLICATE_ITEM: { status: 409, errorCode: 'GH-30301', message: 'The item repeats an id given earlier in the same migration' },
} as const satisfies Record<string, { status: number; errorCode: string; message: string }>;

export type ErrorCode = keyof typeof catalogue;

export class AppError extends Error {
  readonly status: number;
  readonly errorCode: string;
  constructor(
    readonly code: ErrorCode,
    message?: string,
    readonly context?: Record<string, unknown>,
    /** Response headers that belong to this error (e.g. retry-after on a 429). */
    readonly headers?: Record<string, string>,
  ) {
    super(message ?? catalogue[code].message);
    this.status = catalogue[code].status;
    this.errorCode = catalogue[code].errorCode;
  }
}

export interface ErrorBody {
  errors: string[];
  errorCode: string;
  context?: Record<string, unknown>;
}

export function errorBody(err: AppError): ErrorBody {
  return { errors: [err.message], errorCode: err.errorCode, ...(err.context ? { context: err.context } : {}) };
}
