import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startTestApp, type TestApp } from '../helpers/harness.ts';

/**
 * The team standard: one TypeBox schema per route gives validation, the TS type and the OpenAPI document. A route
 * without a response schema is missing from the document's answers and is serialised without a schema, so every route
 * of the modules below must declare its 2xx answer: a JSON schema, a content-type-specific one (XML, CSV, JSON lines),
 * or, for a body-less answer (204, a redirect), a declared status with its own description.
 */
const COVERED_TAGS = [
  'entitlements',
  'social login',
  'sso',
  'sso sign-in',
  'mfa',
  'audits',
  'user pools',
  'directory',
  'environment',
  'user groups',
  'IP restrictions',
  'domain restrictions',
  'invitations',
  'account invitations',
  'accounts',
  'hierarchy',
  'account settings',
  'account migration',
  'users',
  'me',
  'roles',
  'account roles',
  'permissions',
  'permission categories',
  'webhooks',
  'security policies',
  'password reset',
  'email verification',
  'phone numbers',
  'sign-up',
  'passwordless',
  'messaging',
  'email configuration',
  'email templates',
  'sms configuration',
  'sms templates',
  'keys',
  'scim',
  'sign-in',
  'sessions',
  'machine access',
  'delegation',
  'applications',
  'user migration',
];

/** Operations of the covered tags allowed without a declared 2xx answer, each with the reason. Keep it short. */
const EXCEPTIONS: Record<string, string> = {
  'POST /directory/resources/scim/v2.0/{configId}/Bulk':
    'bulk is not supported (ServiceProviderConfig bulk.supported false): always a 501 SCIM error',
};

const METHODS = ['get', 'post', 'put', 'patch', 'delete'];
type Op = {
  tags?: string[];
  responses?: Record<string, { description?: string; content?: Record<string, { schema?: unknown }> }>;
};

describe('OpenAPI document: every route of the covered modules declares its 2xx answer', () => {
  let t: TestApp;
  let doc: { paths: Record<string, Record<string, Op>> };
  const ops = () =>
    Object.entries(doc.paths).flatMap(([path, item]) =>
      Object.entries(item)
        .filter(([m]) => METHODS.includes(m))
        .map(([m, op]) => ({ id: `${m.toUpperCase()} ${path}`, op })),
    );

  before(async () => {
    t = await startTestApp({}, { jobs: false });
    const r = await t.call('GET', '/openapi.json');
    assert.equal(r.status, 200);
    doc = r.body;
  });
  after(async () => t.close());

  test('every covered tag has routes in the document (a renamed tag fails here rather than escaping the check)', () => {
    const seen = new Set(ops().flatMap(({ op }) => op.tags ?? []));
    for (const tag of COVERED_TAGS) assert.ok(seen.has(tag), `no route tagged "${tag}"`);
  });

  test('each route declares a 2xx response: a schema per content type, or a described body-less status', () => {
    const missing: string[] = [];
    let checked = 0;
    for (const { id, op } of ops()) {
      if (!(op.tags ?? []).some((tag) => COVERED_TAGS.includes(tag)) || EXCEPTIONS[id]) continue;
      checked++;
      const declared = Object.entries(op.responses ?? {})
        .filter(([status]) => /^2\d\d$|^3\d\d$/.test(status))
        .some(([status, r]) => {
          if (r.content) return Object.values(r.content).every((c) => c.schema !== undefined);
          // No content: only a body-less status (204, a redirect) that says what it answers.
          return (
            (status === '204' || status.startsWith('3')) && !!r.description && r.description !== 'Default Response'
          );
        });
      if (!declared) missing.push(id);
    }
    assert.ok(checked > 150, `only ${checked} routes checked: the tags above no longer match the document`);
    assert.deepEqual(missing, [], 'routes without a 2xx response schema');
  });

  test('non-JSON answers are declared with their content type', () => {
    const content = (path: string, method: string, status = '200') =>
      Object.keys(doc.paths[path]?.[method]?.responses?.[status]?.content ?? {});
    assert.deepEqual(content('/identity/resources/sso/v1/saml/configurations/sp-metadata', 'get'), [
      'application/samlmetadata+xml',
    ]);
    assert.deepEqual(content('/audits/export', 'get'), ['text/csv', 'application/x-ndjson']);
    assert.deepEqual(content('/audits/export/csv', 'post', '201'), ['text/csv']);
    // SCIM answers are application/scim+json only: documented, never filtered by a JSON serializer.
    assert.deepEqual(content('/directory/resources/scim/v2.0/{configId}/Users', 'get'), ['application/scim+json']);
    assert.deepEqual(content('/directory/resources/scim/v2.0/{configId}/Groups', 'post', '201'), [
      'application/scim+json',
    ]);
    const acs = doc.paths['/identity/resources/auth/v1/user/saml/postlogin'].post.responses ?? {};
    assert.ok(acs['200']?.content && acs['302']?.description, 'the SAML ACS answers JSON or a redirect');
  });

  test('the entitlements snapshot documents its tuples and the decision answer its result', () => {
    const snap = doc.paths['/entitlements/api/v1/vendor-entitlements'].get.responses?.['200']?.content?.[
      'application/json'
    ]?.schema as any;
    assert.deepEqual(Object.keys(snap.properties.data.properties).sort(), [
      'entitlements',
      'featureBundles',
      'featureFlags',
      'features',
      'routes',
      'routesMode',
    ]);
    assert.match(
      snap.properties.data.properties.entitlements.items.description,
      /\[planId, tenantId, userId \| null, expirationDate \| null\]/,
    );
    const decision = doc.paths['/entitlements/api/v1/decisions/{kind}'].post.responses?.['200']?.content?.[
      'application/json'
    ]?.schema as any;
    assert.deepEqual(Object.keys(decision.properties).sort(), ['decision_id', 'metrics', 'result']);
  });
});
