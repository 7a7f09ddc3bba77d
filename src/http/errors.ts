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
  BAD_URL: { status: 400, errorCode: 'GH-10009', message: 'The request URL is malformed' },
  PATH_PARAM_TOO_LONG: { status: 414, errorCode: 'GH-10010', message: 'A path parameter is longer than the limit' },
  LIMITS_UNAVAILABLE: {
    status: 503,
    errorCode: 'GH-10012',
    message: 'The rate-limit store cannot be reached; try again shortly',
  },
  FORM_REJECTED: {
    status: 403,
    errorCode: 'GH-10011',
    message: 'This form was sent from another site or its token expired',
  },

  UNAUTHENTICATED: {
    status: 401,
    errorCode: 'GH-20001',
    message: 'Authorization header with a bearer token is required',
  },
  INVALID_TOKEN: { status: 401, errorCode: 'GH-20002', message: 'Token is invalid or expired' },
  WRONG_TOKEN_KIND: { status: 403, errorCode: 'GH-20003', message: 'This route does not accept this kind of token' },
  MISSING_PERMISSION: { status: 403, errorCode: 'GH-20004', message: 'The user lacks the permission this route needs' },
  BAD_CREDENTIALS: { status: 401, errorCode: 'GH-20005', message: 'Invalid client id or secret' },
  TENANT_HEADER_REQUIRED: {
    status: 400,
    errorCode: 'GH-20006',
    message: 'Header gatehouse-tenant-id is required with an environment token',
  },
  SCOPE_DENIED: { status: 403, errorCode: 'GH-20007', message: 'The credential scopes do not cover this route' },
  CREDENTIAL_NOT_FOUND: { status: 404, errorCode: 'GH-20008', message: 'Credential not found' },
  KEY_NOT_FOUND: { status: 404, errorCode: 'GH-20009', message: 'Signing key not found' },
  OUTBOUND_URL_REFUSED: {
    status: 400,
    errorCode: 'GH-20030',
    message: 'The URL points at a loopback, private, link-local or metadata address',
  },
  ROLE_NOT_GRANTABLE: {
    status: 403,
    errorCode: 'GH-20020',
    message:
      'A user may grant or take away only roles whose every permission they hold and whose level is not above their own',
  },
  HUMAN_SESSION_REQUIRED: {
    status: 403,
    errorCode: 'GH-20010',
    message:
      "This route changes who the user is: it needs the user's own signed-in session (no API, access, impersonation or delegated token)",
  },
  RECENT_AUTHENTICATION_REQUIRED: {
    status: 403,
    errorCode: 'GH-20011',
    message:
      'This route needs a recent authentication: re-authenticate with POST /identity/resources/auth/v1/user/step-up/generate, or sign in again',
  },
  ACCESS_REVOKED: {
    status: 401,
    errorCode: 'GH-20012',
    message: "The token's session or account membership is no longer live",
  },
  STEP_UP_UNAVAILABLE: {
    status: 400,
    errorCode: 'GH-20013',
    message: 'The user has no password or authenticator app to re-authenticate with: sign in again',
  },

  ACCOUNT_NOT_FOUND: { status: 404, errorCode: 'GH-30001', message: 'Account not found' },
  ACCOUNT_EXISTS: { status: 409, errorCode: 'GH-30002', message: 'An account with this id already exists' },
  ACCOUNT_ALIAS_TAKEN: { status: 409, errorCode: 'GH-10030', message: 'Another account already has this alias' },
  HIERARCHY_CYCLE: {
    status: 409,
    errorCode: 'GH-30003',
    message: 'This assignment would create a cycle in the account hierarchy',
  },
  NOT_IN_HIERARCHY: { status: 404, errorCode: 'GH-30004', message: 'The account has no parent in the hierarchy' },
  OUTSIDE_HIERARCHY: {
    status: 403,
    errorCode: 'GH-30005',
    message: 'The account is not within your account hierarchy',
  },
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
  TEMPORARY_USERS_DISABLED: {
    status: 400,
    errorCode: 'GH-42007',
    message: 'Temporary users are disabled in this environment',
  },
  CURRENT_PASSWORD_INVALID: { status: 400, errorCode: 'GH-42008', message: 'The current password is wrong' },
  USERNAME_NOT_FOUND: { status: 404, errorCode: 'GH-42009', message: 'No user has this username' },
  BULK_TASK_NOT_FOUND: { status: 404, errorCode: 'GH-42010', message: 'Bulk task not found' },
  USER_EMAIL_NOT_FOUND: { status: 404, errorCode: 'GH-42011', message: 'The user has no such email address' },
  EMAIL_CODES_UNAVAILABLE: {
    status: 503,
    errorCode: 'GH-42012',
    message: 'Email codes are not available on this server',
  },
  USER_HAS_NO_EMAIL: {
    status: 409,
    errorCode: 'GH-42013',
    message: 'The user has no email address: nothing can be emailed to them',
  },
  INVITATION_NEEDS_MAILBOX_PROOF: {
    status: 403,
    errorCode: 'GH-42090',
    message:
      'Your password was set by an administrator: accept this invitation with the emailed invitation link or code',
  },
  OWN_SESSION_REQUIRED: {
    status: 403,
    errorCode: 'GH-42091',
    message: 'Only your own signed-in session may do this (not an impersonation, delegated, API or machine token)',
  },
  // -- sign-in and sessions (GH-430xx) --
  INVALID_LOGIN: { status: 401, errorCode: 'GH-43001', message: 'Invalid email or password' },
  INVALID_REFRESH_TOKEN: { status: 401, errorCode: 'GH-43002', message: 'Refresh token is invalid or expired' },
  SESSION_REVOKED: { status: 401, errorCode: 'GH-43003', message: 'The session was revoked' },
  NO_ACCOUNT_ACCESS: { status: 403, errorCode: 'GH-43004', message: 'The user has no access to this account' },
  USER_LOCKED: { status: 403, errorCode: 'GH-43005', message: 'The user is locked' },
  SESSION_NOT_FOUND: { status: 404, errorCode: 'GH-43006', message: 'Session not found' },
  // -- captcha policy (GH-431xx) --
  CAPTCHA_REQUIRED: {
    status: 400,
    errorCode: 'GH-43101',
    message: 'recaptchaToken is required: the captcha policy is enabled',
  },
  CAPTCHA_INVALID: {
    status: 400,
    errorCode: 'GH-43102',
    message: 'The recaptchaToken was refused by the captcha check',
  },
  CAPTCHA_UNAVAILABLE: {
    status: 503,
    errorCode: 'GH-43103',
    message: 'The captcha provider could not check the recaptchaToken; try again shortly',
  },
  CAPTCHA_POLICY_EXISTS: {
    status: 409,
    errorCode: 'GH-43104',
    message: 'A captcha policy already exists; change it with PUT',
  },
  CAPTCHA_POLICY_NOT_FOUND: {
    status: 404,
    errorCode: 'GH-43105',
    message: 'No captcha policy exists; create one with POST',
  },
  // -- roles and permissions (GH-400xx) --
  ROLE_NOT_FOUND: { status: 404, errorCode: 'GH-40001', message: 'Role not found' },
  ROLE_KEY_EXISTS: { status: 409, errorCode: 'GH-40002', message: 'A role with this key already exists in its scope' },
  PERMISSION_NOT_FOUND: { status: 404, errorCode: 'GH-40003', message: 'Permission not found' },
  PERMISSION_KEY_EXISTS: { status: 409, errorCode: 'GH-40004', message: 'A permission with this key already exists' },
  CATEGORY_NOT_FOUND: { status: 404, errorCode: 'GH-40005', message: 'Permission category not found' },
  CATEGORY_EXISTS: {
    status: 409,
    errorCode: 'GH-40006',
    message: 'A permission category with this id or name already exists',
  },
  UNKNOWN_IDS: {
    status: 400,
    errorCode: 'GH-40007',
    message: 'The body names ids that do not exist or are out of reach',
  },
  BUILT_IN_PROTECTED: {
    status: 403,
    errorCode: 'GH-40008',
    message: 'Built-in Gatehouse permissions and categories cannot be removed, nor their keys changed',
  },
  ROLE_NOT_MOVABLE: {
    status: 409,
    errorCode: 'GH-40009',
    message: 'Only an environment role can be moved into an account',
  },
  PERMISSION_NOT_GRANTABLE: {
    status: 403,
    errorCode: 'GH-40010',
    message: 'The user may not put this permission into a role',
  },
  ROLE_NOT_EDITABLE: {
    status: 403,
    errorCode: 'GH-40011',
    message: "A user token changes only the roles of its own account, not the environment's",
  },
  // -- credentials and policies (GH-410xx) --
  WEAK_PASSWORD: { status: 400, errorCode: 'GH-41001', message: 'The password does not meet the password policy' },
  POLICY_EXISTS: {
    status: 409,
    errorCode: 'GH-41002',
    message: 'This scope already has its own policy; change it with PATCH',
  },
  POLICY_NOT_FOUND: { status: 404, errorCode: 'GH-41003', message: 'This scope has no policy of its own' },
  // -- user migration (GH-440xx) --
  HASH_CONFIG_INVALID: {
    status: 400,
    errorCode: 'GH-44001',
    message: 'passwordHashConfig or passwordHash does not fit passwordHashType',
  },
  UNSUPPORTED_PROVIDER: {
    status: 400,
    errorCode: 'GH-44002',
    message: 'This identity provider is not supported for migration',
  },
  APPLICATION_NOT_FOUND: { status: 404, errorCode: 'GH-44003', message: 'Application not found' },
  NO_DEFAULT_APPLICATION: {
    status: 409,
    errorCode: 'GH-44004',
    message: 'The environment has no default or auto-assign application',
  },
  DEFAULT_APPLICATION: {
    status: 409,
    errorCode: 'GH-44005',
    message: 'The default application cannot be deleted or unset; make another application the default first',
  },
  APPLICATION_ASSIGNMENT_NOT_FOUND: {
    status: 404,
    errorCode: 'GH-44006',
    message: 'This account is not assigned to this application',
  },
  APPLICATION_CLIENT_NOT_FOUND: { status: 404, errorCode: 'GH-44007', message: 'Application client not found' },
  APPLICATION_NOT_ASSIGNED: {
    status: 409,
    errorCode: 'GH-44008',
    message: 'The account is not assigned to this MANAGED_ACCESS application',
  },
  APPLICATION_HEADER_REQUIRED: {
    status: 400,
    errorCode: 'GH-44009',
    message: 'The application is required: body appId or header gatehouse-application-id',
  },
  // -- JWT templates (GH-690xx) --
  JWT_TEMPLATE_NOT_FOUND: { status: 404, errorCode: 'GH-69001', message: 'JWT template not found' },
  JWT_TEMPLATE_KEY_EXISTS: {
    status: 409,
    errorCode: 'GH-69002',
    message: 'A JWT template with this key already exists',
  },
  JWT_TEMPLATE_RESERVED_CLAIM: {
    status: 400,
    errorCode: 'GH-69003',
    message: 'A JWT template cannot set a claim the platform sets itself',
  },
  JWT_TEMPLATE_ALGORITHM_UNSUPPORTED: {
    status: 400,
    errorCode: 'GH-69004',
    message: 'This signing algorithm is not supported for JWT templates',
  },
  JWT_TEMPLATE_IN_USE: {
    status: 409,
    errorCode: 'GH-69005',
    message: 'The JWT template is named by a targeting rule',
  },
  JWT_TARGETING_NOT_FOUND: {
    status: 404,
    errorCode: 'GH-69006',
    message: 'JWT template targeting configuration not found',
  },
  JWT_TARGETING_EXISTS: {
    status: 409,
    errorCode: 'GH-69007',
    message: 'The JWT template targeting configuration exists: change it with PUT or PATCH',
  },
  // -- entitlements (GH-500xx) --
  FEATURE_NOT_FOUND: { status: 404, errorCode: 'GH-50001', message: 'Feature not found' },
  FEATURE_KEY_EXISTS: { status: 409, errorCode: 'GH-50002', message: 'A feature with this key already exists' },
  PLAN_NOT_FOUND: { status: 404, errorCode: 'GH-50003', message: 'Plan not found' },
  PLAN_NAME_EXISTS: { status: 409, errorCode: 'GH-50004', message: 'A plan with this name already exists' },
  ENTITLEMENT_NOT_FOUND: { status: 404, errorCode: 'GH-50005', message: 'Entitlement not found' },
  ENTITLEMENT_EXISTS: {
    status: 409,
    errorCode: 'GH-50006',
    message: 'This plan is already granted to this account or user',
  },
  FEATURE_FLAG_NOT_FOUND: { status: 404, errorCode: 'GH-50007', message: 'Feature flag not found' },
  FEATURE_FLAG_EXISTS: { status: 409, errorCode: 'GH-50008', message: 'This feature already has a feature flag' },
  ROUTE_RULE_NOT_FOUND: { status: 404, errorCode: 'GH-50009', message: 'Route not found' },
  ROUTE_EXISTS: { status: 409, errorCode: 'GH-50010', message: 'A route with this method and path already exists' },
  INVALID_RULES: { status: 400, errorCode: 'GH-50011', message: 'Targeting rules are malformed' },
  ENTITY_TYPE_NOT_FOUND: { status: 404, errorCode: 'GH-50012', message: 'Entity type not found' },
  ENTITY_TYPE_EXISTS: { status: 409, errorCode: 'GH-50013', message: 'An entity type with this key already exists' },
  ENTITY_ACTION_NOT_FOUND: { status: 404, errorCode: 'GH-50014', message: 'The entity type has no such action' },
  ENTITY_ACTION_EXISTS: {
    status: 409,
    errorCode: 'GH-50015',
    message: 'The entity type already has an action with this key',
  },
  ENTITY_RELATION_NOT_FOUND: { status: 404, errorCode: 'GH-50016', message: 'The entity type has no such relation' },
  ENTITY_RELATION_EXISTS: {
    status: 409,
    errorCode: 'GH-50017',
    message: 'The entity type already has a relation with this key',
  },
  REBAC_IN_USE: {
    status: 409,
    errorCode: 'GH-50018',
    message: 'Still referenced by relations, actions or relation assignments',
  },
  // -- messaging and recovery (GH-610xx) --
  MAIL_CONFIG_NOT_FOUND: { status: 404, errorCode: 'GH-61001', message: 'No email configuration exists' },
  SMS_CONFIG_NOT_FOUND: { status: 404, errorCode: 'GH-61002', message: 'No SMS configuration exists' },
  TEMPLATE_NOT_FOUND: { status: 404, errorCode: 'GH-61003', message: 'Template not found' },
  MESSAGE_DELIVERY_NOT_FOUND: { status: 404, errorCode: 'GH-61005', message: 'Message delivery not found' },
  DEV_OUTBOX_DISABLED: {
    status: 404,
    errorCode: 'GH-61004',
    message: 'The development outbox is off (production mode without MESSAGING_DEV_OUTBOX=true)',
  },
  RESET_TOKEN_INVALID: { status: 400, errorCode: 'GH-61010', message: 'The password reset token is invalid' },
  RESET_TOKEN_EXPIRED: {
    status: 410,
    errorCode: 'GH-61011',
    message: 'The password reset token has expired or was already used',
  },
  OTC_INVALID: { status: 400, errorCode: 'GH-61012', message: 'The code is wrong' },
  OTC_EXPIRED: { status: 410, errorCode: 'GH-61013', message: 'The code has expired or was already used' },
  OTC_ATTEMPTS_EXCEEDED: { status: 429, errorCode: 'GH-61014', message: 'Too many wrong codes; request a new one' },
  VERIFY_TOKEN_INVALID: { status: 400, errorCode: 'GH-61015', message: 'The email verification token is invalid' },
  VERIFY_TOKEN_EXPIRED: {
    status: 410,
    errorCode: 'GH-61016',
    message: 'The email verification token has expired or was already used',
  },
  MAILBOX_PROOF_REQUIRED: {
    status: 400,
    errorCode: 'GH-61017',
    message:
      'This reset token needs the emailed reset link: request one with POST /identity/resources/users/v1/passwords/reset',
  },
  EMAIL_PROVIDER_UNSUPPORTED: {
    status: 400,
    errorCode: 'GH-61006',
    message: 'This email provider is not supported by this build',
  },
  PHONE_NOT_FOUND: { status: 404, errorCode: 'GH-61020', message: 'Phone number not found' },
  PHONE_ALREADY_VERIFIED: { status: 409, errorCode: 'GH-61021', message: 'The phone number is already verified' },
  // -- groups and restrictions (GH-650xx) --
  GROUP_NOT_FOUND: { status: 404, errorCode: 'GH-65001', message: 'Group not found' },
  GROUP_NAME_EXISTS: {
    status: 409,
    errorCode: 'GH-65002',
    message: 'A group with this name already exists in the account',
  },
  GROUP_USER_NOT_MEMBER: {
    status: 400,
    errorCode: 'GH-65003',
    message: "Only members of the group's account can join its groups",
  },
  GROUPS_DISABLED: { status: 403, errorCode: 'GH-65004', message: 'User groups are disabled in this environment' },
  IP_RESTRICTED: {
    status: 403,
    errorCode: 'GH-65005',
    message: 'Sign-in from this IP address is not allowed for this account',
  },
  IP_RULE_EXISTS: { status: 409, errorCode: 'GH-65006', message: 'This IP restriction already exists' },
  IP_RULE_NOT_FOUND: { status: 404, errorCode: 'GH-65007', message: 'IP restriction not found' },
  RESTRICTION_LOCKOUT: {
    status: 409,
    errorCode: 'GH-65008',
    message: "This change would lock the account's administrators out",
  },
  DOMAIN_RESTRICTED: { status: 403, errorCode: 'GH-65009', message: 'This email domain is not allowed' },
  DOMAIN_RULE_EXISTS: { status: 409, errorCode: 'GH-65010', message: 'This domain restriction already exists' },
  DOMAIN_RULE_NOT_FOUND: { status: 404, errorCode: 'GH-65011', message: 'Domain restriction not found' },
  USER_SOURCE_NOT_FOUND: { status: 404, errorCode: 'GH-65012', message: 'User source not found' },
  BUILT_IN_SOURCE: {
    status: 409,
    errorCode: 'GH-65013',
    message: 'The built-in user pool cannot be removed or reconfigured',
  },
  // -- sign-up, invitations, passwordless (GH-620xx) --
  CODE_INVALID: { status: 400, errorCode: 'GH-62001', message: 'The code or link is invalid' },
  CODE_EXPIRED: { status: 410, errorCode: 'GH-62002', message: 'The code or link has expired or was already used' },
  SIGNUP_DISABLED: { status: 403, errorCode: 'GH-62003', message: 'Sign-up is disabled in this environment' },
  USER_NOT_ACTIVATED: { status: 403, errorCode: 'GH-62004', message: 'The user has not activated the account yet' },
  PASSWORDLESS_DISABLED: { status: 400, errorCode: 'GH-62005', message: 'This passwordless method is not enabled' },
  INVITATION_NOT_FOUND: { status: 404, errorCode: 'GH-62006', message: 'Invitation not found' },
  ALREADY_ACTIVATED: { status: 409, errorCode: 'GH-62007', message: 'The user is already activated' },
  INVITE_TOKEN_NOT_FOUND: { status: 404, errorCode: 'GH-62008', message: 'Account invite token not found' },
  // -- directory and SCIM (GH-600xx) --
  SCIM_CONNECTION_NOT_FOUND: { status: 404, errorCode: 'GH-60001', message: 'SCIM connection not found' },
  SCIM_INVALID_TOKEN: {
    status: 401,
    errorCode: 'GH-60002',
    message: 'The SCIM bearer token is missing, wrong or revoked',
  },
  SCIM_INVALID_FILTER: {
    status: 400,
    errorCode: 'GH-60003',
    message: 'The filter is malformed or names an attribute that cannot be filtered',
  },
  SCIM_INVALID_PATH: {
    status: 400,
    errorCode: 'GH-60004',
    message: 'The attribute path is malformed or names an unknown attribute',
  },
  SCIM_INVALID_SYNTAX: {
    status: 400,
    errorCode: 'GH-60005',
    message: 'The request body does not follow the SCIM protocol',
  },
  SCIM_INVALID_VALUE: {
    status: 400,
    errorCode: 'GH-60006',
    message: 'A required value is missing or a value is not valid',
  },
  SCIM_UNIQUENESS: { status: 409, errorCode: 'GH-60007', message: 'A resource with this unique value already exists' },
  SCIM_RESOURCE_NOT_FOUND: { status: 404, errorCode: 'GH-60008', message: 'SCIM resource not found' },
  SCIM_PRECONDITION_FAILED: {
    status: 412,
    errorCode: 'GH-60009',
    message: 'The resource changed on the server (If-Match does not match its version)',
  },
  SCIM_NO_TARGET: { status: 400, errorCode: 'GH-60010', message: 'The path names no existing value' },
  SCIM_MUTABILITY: { status: 400, errorCode: 'GH-60011', message: 'The request tries to change a read-only attribute' },
  SCIM_NOT_IMPLEMENTED: { status: 501, errorCode: 'GH-60012', message: 'This SCIM feature is not supported' },
  // -- machine access (GH-640xx) --
  API_TOKENS_DISABLED: {
    status: 403,
    errorCode: 'GH-64001',
    message: 'API tokens are disabled in this environment (identity configuration apiTokensEnabled)',
  },
  API_TOKEN_NOT_FOUND: { status: 404, errorCode: 'GH-64002', message: 'API token not found' },
  ACCESS_TOKEN_NOT_FOUND: { status: 404, errorCode: 'GH-64003', message: 'Access token not found or no longer active' },
  INVALID_API_TOKEN_REFRESH: {
    status: 401,
    errorCode: 'GH-64004',
    message: 'The API token refresh token is invalid, expired or already used',
  },
  API_TOKEN_EXPIRED: { status: 401, errorCode: 'GH-64005', message: 'The API token has expired' },
  TOKEN_PERMISSION_NOT_HELD: {
    status: 403,
    errorCode: 'GH-64006',
    message: 'A token may only carry permissions its creator holds',
  },
  DELEGATION_DISABLED: { status: 403, errorCode: 'GH-64007', message: 'Delegation is disabled in this environment' },
  IMPERSONATION_NOT_ALLOWED: {
    status: 403,
    errorCode: 'GH-64008',
    message: 'This caller may not impersonate this user',
  },
  USER_HEADER_REQUIRED: {
    status: 400,
    errorCode: 'GH-64009',
    message: 'Header gatehouse-user-id is required with an environment token',
  },
  MACHINE_TOKEN_NOT_ALLOWED: {
    status: 403,
    errorCode: 'GH-64010',
    message: 'A machine token (API or access token) cannot call this route',
  },
  MACHINE_TOKEN_REVOKED: {
    status: 401,
    errorCode: 'GH-64011',
    message: 'The token was deleted, expired, or its user or account was removed',
  },
  // -- MFA (GH-630xx) --
  MFA_TOKEN_INVALID: {
    status: 401,
    errorCode: 'GH-63001',
    message: 'The mfaToken is invalid, expired or already used; sign in again',
  },
  MFA_INVALID_CODE: { status: 400, errorCode: 'GH-63002', message: 'The code is wrong or expired' },
  MFA_CODE_REUSED: { status: 400, errorCode: 'GH-63003', message: 'This code was already used; wait for the next one' },
  MFA_DEVICE_NOT_FOUND: { status: 404, errorCode: 'GH-63004', message: 'MFA device not found' },
  MFA_ALREADY_ENROLLED: {
    status: 409,
    errorCode: 'GH-63005',
    message: 'The user already has an MFA factor; sign in with it (enrol more after signing in)',
  },
  MFA_REQUIRED_BY_POLICY: {
    status: 409,
    errorCode: 'GH-63006',
    message: 'The MFA policy forces MFA: enrol another factor before removing the last one',
  },
  MFA_STRATEGY_INACTIVE: {
    status: 400,
    errorCode: 'GH-63007',
    message: 'This MFA method is not enabled in the environment',
  },
  MFA_STRATEGY_UNSUPPORTED: { status: 400, errorCode: 'GH-63008', message: 'This MFA strategy is not supported' },
  MFA_INVALID_RECOVERY: { status: 400, errorCode: 'GH-63009', message: 'The email or the recovery code is wrong' },
  MFA_NO_PENDING_ENROLLMENT: {
    status: 400,
    errorCode: 'GH-63010',
    message: 'No enrolment in progress (or it expired); start it again with the enroll route',
  },
  MFA_INVALID_OTC: {
    status: 400,
    errorCode: 'GH-63011',
    message: 'The otcToken is invalid, expired or already used; request a new code',
  },
  MFA_NO_PHONE: { status: 400, errorCode: 'GH-63012', message: 'No phone number for SMS MFA' },
  // -- WebAuthn, passkeys (GH-631xx) --
  WEBAUTHN_CHALLENGE_INVALID: {
    status: 400,
    errorCode: 'GH-63101',
    message: 'The WebAuthn challenge is unknown, expired or already used; request new options',
  },
  WEBAUTHN_VERIFICATION_FAILED: { status: 400, errorCode: 'GH-63102', message: 'The WebAuthn response was refused' },
  WEBAUTHN_COUNTER_REGRESSION: {
    status: 400,
    errorCode: 'GH-63103',
    message: 'The authenticator signature counter went backwards (a cloned authenticator?)',
  },
  WEBAUTHN_CREDENTIAL_UNKNOWN: { status: 400, errorCode: 'GH-63104', message: 'This passkey is not registered' },
  WEBAUTHN_CREDENTIAL_EXISTS: { status: 409, errorCode: 'GH-63105', message: 'This passkey is already registered' },
  // -- SSO and social login (GH-660xx) --
  SSO_CONFIG_NOT_FOUND: { status: 404, errorCode: 'GH-66001', message: 'SSO configuration not found' },
  SSO_INVALID_METADATA: { status: 400, errorCode: 'GH-66002', message: 'The identity provider metadata is not usable' },
  SSO_DOMAIN_NOT_FOUND: { status: 404, errorCode: 'GH-66003', message: 'SSO domain not found' },
  SSO_DOMAIN_TAKEN: { status: 409, errorCode: 'GH-66004', message: 'The domain is verified by another account' },
  SSO_DOMAIN_NOT_VERIFIED: { status: 400, errorCode: 'GH-66005', message: 'The domain is not verified' },
  SSO_GROUP_NOT_FOUND: { status: 404, errorCode: 'GH-66006', message: 'SSO group mapping not found' },
  SSO_EMAIL_NOT_EXCLUDED: { status: 404, errorCode: 'GH-66007', message: 'The email is not excluded from SSO' },
  SSO_NOT_CONFIGURED: { status: 404, errorCode: 'GH-66008', message: 'No SSO is configured for this email' },
  SSO_STATE_INVALID: {
    status: 400,
    errorCode: 'GH-66009',
    message: 'The sign-in state is unknown, expired or already used',
  },
  SSO_REDIRECT_NOT_ALLOWED: {
    status: 400,
    errorCode: 'GH-66010',
    message: 'The redirect URL is not in the allow-list',
  },
  SSO_INVALID_ASSERTION: { status: 401, errorCode: 'GH-66011', message: 'The identity provider response was refused' },
  SSO_UNSAFE_ALGORITHM: {
    status: 401,
    errorCode: 'GH-66012',
    message: 'The identity provider response uses a refused signature algorithm',
  },
  SSO_ASSERTION_REPLAYED: { status: 401, errorCode: 'GH-66013', message: 'The SAML assertion was already used' },
  SSO_OIDC_REFUSED: { status: 401, errorCode: 'GH-66014', message: 'The OpenID provider answer was refused' },
  SSO_PROVIDER_UNAVAILABLE: {
    status: 502,
    errorCode: 'GH-66015',
    message: 'The identity provider could not be reached',
  },
  SOCIAL_PROVIDER_NOT_FOUND: {
    status: 404,
    errorCode: 'GH-66016',
    message: 'Social login provider not configured or inactive',
  },
  SOCIAL_LOGIN_REFUSED: { status: 401, errorCode: 'GH-66017', message: 'The social login provider answer was refused' },
  SOCIAL_EMAIL_UNVERIFIED: {
    status: 403,
    errorCode: 'GH-66018',
    message: 'The provider did not vouch for the email address',
  },
  SOCIAL_SIGNUP_DISABLED: {
    status: 403,
    errorCode: 'GH-66019',
    message: 'Sign-up is disabled; an existing user must be linked first',
  },
  SOCIAL_PROVIDER_EXISTS: {
    status: 409,
    errorCode: 'GH-66020',
    message: 'This social login provider is already configured',
  },
  SOCIAL_IDENTITY_CONFLICT: {
    status: 409,
    errorCode: 'GH-66021',
    message: 'The user is linked to another account of this provider',
  },
  // -- events, webhooks, audit (GH-670xx) --
  WEBHOOK_NOT_FOUND: { status: 404, errorCode: 'GH-67001', message: 'Webhook not found' },
  DELIVERY_NOT_FOUND: { status: 404, errorCode: 'GH-67002', message: 'Webhook delivery not found' },
  WEBHOOK_URL_REFUSED: {
    status: 400,
    errorCode: 'GH-67003',
    message: 'The webhook URL points at a private, loopback, link-local or metadata address',
  },
  AUDIT_UNAVAILABLE: {
    status: 503,
    errorCode: 'GH-67005',
    message:
      'The audit entry of this request could not be stored; the change may have been applied: check its state before retrying',
  },
  // -- hierarchy (GH-301xx) --
  HIERARCHY_TOO_DEEP: {
    status: 409,
    errorCode: 'GH-30101',
    message: 'The account hierarchy would be deeper than the limit',
  },
  // -- account settings (GH-302xx) --
  // -- account migration (GH-303xx) --
  MIGRATION_DUPLICATE_ITEM: {
    status: 409,
    errorCode: 'GH-30301',
    message: 'The item repeats an id given earlier in the same migration',
  },
  // -- credentials and policies (GH-410xx), continued --
  EMAIL_CHANGE_NOT_ALLOWED: {
    status: 403,
    errorCode: 'GH-41004',
    message: 'Users may not change their own email address (user emails policy)',
  },
  // -- approval flows (GH-680xx) --
  APPROVAL_FLOW_NOT_FOUND: { status: 404, errorCode: 'GH-68001', message: 'Approval flow not found' },
  APPROVAL_EXECUTION_NOT_FOUND: { status: 404, errorCode: 'GH-68002', message: 'Approval flow execution not found' },
  NOT_AN_APPROVER: { status: 403, errorCode: 'GH-68003', message: 'This user is not an approver of this step' },
  APPROVAL_ALREADY_DECIDED: {
    status: 409,
    errorCode: 'GH-68004',
    message: 'This approval step or execution is already decided',
  },
  // -- OpenID provider (GH-691xx) --
  OIDC_INTERACTION_NOT_FOUND: {
    status: 400,
    errorCode: 'GH-69101',
    message: 'This sign-in request expired or belongs to another browser',
  },
  OIDC_CLIENT_NOT_FOUND: { status: 400, errorCode: 'GH-69102', message: 'The application of this request is unknown' },
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

export const SCIM_ERROR_URN = 'urn:ietf:params:scim:api:messages:2.0:Error';

/** RFC 7644 section 3.12: a SCIM error carries these fields and nothing else (strict clients reject extras). */
export function scimErrorBody(status: number, detail: string, scimType?: string) {
  return { schemas: [SCIM_ERROR_URN], status: String(status), ...(scimType ? { scimType } : {}), detail };
}
