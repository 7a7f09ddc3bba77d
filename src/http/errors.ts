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
  // -- hierarchy (GH-301xx) --
  // -- account settings (GH-302xx) --
  // -- account migration (GH-303xx) --
} as const satisfies Record<string, { status: number; errorCode: string; message: string }>;

export type ErrorCode = keyof typeof catalogue;

export class AppError extends Error {
  readonly status: number;
  readonly errorCode: string;
  constructor(
    readonly code: ErrorCode,
    message?: string,
    readonly context?: Record<string, unknown>,
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
