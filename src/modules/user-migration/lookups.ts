// What other modules join of the applications tables, as subqueries (the planner flattens a plain subquery, so the
// join costs what it did): the user pools list and count the users of the applications they claim.

/** The applications and their users' access grants (`JOIN (${…}) a ON …`). */
export const applicationTablesSql = {
  /** One row per application. */
  applications: 'SELECT id, name, created_at FROM applications',
  /** One row per application, account and user holding access to it. */
  userApplications: 'SELECT app_id, tenant_id, user_id, created_at FROM user_applications',
} as const;
