import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import * as samlify from 'samlify';
import { startOidcIdp } from '../test/fixtures/sso/oidc-idp.ts';
import {
  ms,
  openBenchDb,
  RAISED_SIGNIN_LIMITS,
  REPO_ROOT,
  startBenchApp,
  stats,
  type AreaResult,
  type BenchOptions,
  type HttpClient,
  type Table,
} from './lib.ts';

/**
 * SSO hot paths through the real HTTP stack, sequential on one connection (one Node thread: one core for the
 * server's JavaScript and PGlite), in the same run as password sign-in:
 *  - saml:  ACS post-logins per second (signature verification, replay store, JIT provisioning, session, tokens);
 *           the IdP's signed responses and the pre-logins are made before the clock starts;
 *  - oidc:  OIDC post-logins per second (code exchange with a local oidc-provider in the same process, ID token
 *           signature and claims, provisioning, session); the authorization round trips are made untimed, in
 *           batches right before each batch is timed (the provider's authorization codes expire after 60 s);
 *  - pwd:   password sign-ins per second (argon2id) for reference.
 */
samlify.setSchemaValidator({ validate: async () => 'skipped' });
const FIX = join(REPO_ROOT, 'test', 'fixtures', 'sso');
const APP = 'https://app.example/cb';
const EMAIL_FMT = 'urn:oasis:names:tc:SAML:1.1:nameid-format:emailAddress';

async function timed(n: number, fn: (i: number) => Promise<void>) {
  const samples: number[] = [];
  const start = performance.now();
  for (let i = 0; i < n; i++) {
    const t0 = performance.now();
    await fn(i);
    samples.push(performance.now() - t0);
  }
  const s = stats(samples);
  return { perSecond: (n * 1000) / (performance.now() - start), p50: s.p50, p99: s.p99 };
}

/** Like `timed`, but prepares the inputs `batch` at a time right before timing them; the rate counts the timed calls only. */
async function timedInBatches<T>(
  n: number,
  batch: number,
  prepare: (from: number, to: number) => Promise<T[]>,
  fn: (input: T) => Promise<void>,
) {
  const samples: number[] = [];
  for (let from = 0; from < n; from += batch) {
    const inputs = await prepare(from, Math.min(n, from + batch));
    for (const input of inputs) {
      const t0 = performance.now();
      await fn(input);
      samples.push(performance.now() - t0);
    }
  }
  const s = stats(samples);
  return { perSecond: (n * 1000) / samples.reduce((a, b) => a + b, 0), p50: s.p50, p99: s.p99 };
}

/** OIDC round trips prepared per batch: well inside the provider's 60 s code lifetime even on a loaded machine. */
const OIDC_BATCH = 25;

export async function run(opts: BenchOptions): Promise<AreaResult> {
  const n = opts.quick ? 20 : 300;
  const bdb = await openBenchDb(opts.store, 'sso');
  const app = await startBenchApp(bdb, bdb.db, { env: RAISED_SIGNIN_LIMITS });
  const idpOidc = await startOidcIdp([
    { client_id: 'bench-sso', client_secret: 'bench-sso-secret-0123456789', redirect_uris: [APP] },
  ]);
  try {
    const c: HttpClient = app.client;
    const ok = (r: { status: number; body: unknown }, code: number, what: string) => {
      if (r.status !== code) throw new Error(`${what}: ${r.status} ${JSON.stringify(r.body)}`);
    };
    ok(
      await c.request('POST', '/tenants/resources/tenants/v1', { body: { tenantId: 'bench-saml', name: 'SAML' } }),
      201,
      'account',
    );
    ok(
      await c.request('POST', '/tenants/resources/tenants/v1', { body: { tenantId: 'bench-oidc', name: 'OIDC' } }),
      201,
      'account',
    );
    await c.request('POST', '/identity/resources/configurations/v1', { body: { allowedRedirectUrls: [APP] } });
    await c.request('PUT', '/team/resources/sso/v1/configurations/domains', {
      body: { allowVerifiedUsersToAddDomains: false, skipDomainVerification: true, bypassDomainCrossValidation: false },
    });

    // SAML: IdP, configuration, and n signed responses made before timing.
    const idp = samlify.IdentityProvider({
      entityID: 'https://idp.bench/md',
      privateKey: readFileSync(join(FIX, 'idp-key.pem')),
      signingCert: readFileSync(join(FIX, 'idp-cert.pem')),
      nameIDFormat: [EMAIL_FMT],
      singleSignOnService: [
        { Binding: 'urn:oasis:names:tc:SAML:2.0:bindings:HTTP-Redirect', Location: 'https://idp.bench/sso' },
      ],
      requestSignatureAlgorithm: 'http://www.w3.org/2001/04/xmldsig-more#rsa-sha256',
    });
    const samlCfg = await c.request('POST', '/team/resources/sso/v1/configurations/metadata', {
      body: { metadata: idp.getMetadata() },
      headers: { 'gatehouse-tenant-id': 'bench-saml' },
    });
    ok(samlCfg, 201, 'saml config');
    const md = await fetch(
      `${app.baseUrl}/team/resources/sso/v1/saml/configurations/sp-metadata?tenantId=bench-saml`,
    ).then((r) => r.text());
    const sp = samlify.ServiceProvider({ metadata: md });
    const lib =
      (samlify as unknown as { SamlLib?: typeof samlify.SamlLib; default: { SamlLib: typeof samlify.SamlLib } })
        .SamlLib ?? (samlify as unknown as { default: { SamlLib: typeof samlify.SamlLib } }).default.SamlLib;
    const saml: { SAMLResponse: string; RelayState: string }[] = [];
    for (let i = 0; i < n; i++) {
      const email = `u${i % 10}@saml.bench`;
      const pre = await c.request('POST', '/identity/resources/auth/v1/user/saml/prelogin', {
        body: { email, tenantId: 'bench-saml' },
      });
      ok(pre, 200, 'saml prelogin');
      const url = new URL(pre.body.address);
      const parsed = await idp.parseLoginRequest(sp, 'redirect', {
        query: Object.fromEntries(url.searchParams),
      } as never);
      const requestId = parsed.extract.request!.id as string;
      const relayState = url.searchParams.get('RelayState')!;
      const now = Date.now();
      const acs = sp.entityMeta.getAssertionConsumerService('urn:oasis:names:tc:SAML:2.0:bindings:HTTP-POST') as string;
      const res = await idp.createLoginResponse(
        sp,
        { extract: { request: { id: requestId } } } as never,
        'post',
        { email },
        {
          customTagReplacement: (template: string) => {
            const tv: Record<string, string> = {
              ID: `_${randomUUID()}`,
              AssertionID: `_${randomUUID()}`,
              Destination: acs,
              Audience: sp.entityMeta.getEntityID(),
              EntityID: sp.entityMeta.getEntityID(),
              SubjectRecipient: acs,
              Issuer: 'https://idp.bench/md',
              IssueInstant: new Date(now).toISOString(),
              AssertionConsumerServiceURL: acs,
              StatusCode: 'urn:oasis:names:tc:SAML:2.0:status:Success',
              ConditionsNotBefore: new Date(now).toISOString(),
              ConditionsNotOnOrAfter: new Date(now + 600_000).toISOString(),
              SubjectConfirmationDataNotOnOrAfter: new Date(now + 600_000).toISOString(),
              NameIDFormat: EMAIL_FMT,
              NameID: email,
              InResponseTo: requestId,
              AuthnStatement: '',
              AttributeStatement: '',
            };
            return { id: tv.ID, context: lib.replaceTagsByValue(template, tv) };
          },
        },
      );
      saml.push({ SAMLResponse: res.context, RelayState: relayState });
    }

    // OIDC: configuration; the authorization round trips are made in batches during the timing (untimed).
    const oidcCfg = await c.request('POST', '/team/resources/sso/v1/configurations', {
      body: {
        type: 'oidc',
        oidcClientId: 'bench-sso',
        oidcSecret: 'bench-sso-secret-0123456789',
        configMetadata: { issuer: idpOidc.issuer },
      },
      headers: { 'gatehouse-tenant-id': 'bench-oidc' },
    });
    ok(oidcCfg, 201, 'oidc config');
    for (let i = 0; i < 10; i++) idpOidc.accounts.set(`b${i}`, { email: `u${i}@oidc.bench` });
    // The provider's authorization codes live 60 s (oidc-provider's default, as at real IdPs), so the round trips are
    // made in batches, each right before its batch is timed (the timed figure excludes them).
    const authorizeBatch = async (from: number, to: number) => {
      const out: { code: string; state: string; iss: string }[] = [];
      for (let i = from; i < to; i++) {
        idpOidc.state.nextLogin = `b${i % 10}`;
        const pre = await c.request('POST', '/identity/resources/auth/v2/user/sso/prelogin', {
          body: { email: `u${i % 10}@oidc.bench`, tenantId: 'bench-oidc', redirectUri: APP },
        });
        ok(pre, 200, 'oidc prelogin');
        const back = await idpOidc.authorize(pre.body.address, APP);
        out.push({
          code: back.searchParams.get('code')!,
          state: back.searchParams.get('state')!,
          iss: back.searchParams.get('iss') ?? '',
        });
      }
      return out;
    };
    await authorizeBatch(0, 1); // warms discovery and the provider before timing

    // Password users for the reference.
    ok(
      await c.request('POST', '/identity/resources/users/v1', {
        body: { email: 'pwd@bench.test', password: 'correct horse battery staple', name: 'P' },
        headers: { 'gatehouse-tenant-id': 'bench-saml' },
      }),
      201,
      'user',
    );

    const anon = app.newClient();
    opts.log(`[${opts.store}] timing ${n} of each (sequential, one connection)`);
    const pwd = await timed(n, async () =>
      ok(
        await anon.request('POST', '/identity/resources/auth/v1/user', {
          body: { email: 'pwd@bench.test', password: 'correct horse battery staple' },
        }),
        200,
        'password sign-in',
      ),
    );
    const samlRun = await timed(n, async (i) =>
      ok(
        await anon.request('POST', '/identity/resources/auth/v1/user/saml/postlogin', { body: saml[i] }),
        200,
        'saml postlogin',
      ),
    );
    const oidcRun = await timedInBatches(n, OIDC_BATCH, authorizeBatch, async (back) =>
      ok(
        await anon.request('POST', '/identity/resources/auth/v1/user/oidc/postlogin', { body: back }),
        200,
        'oidc postlogin',
      ),
    );

    const row = (name: string, r: typeof pwd) => [
      name,
      Number(r.perSecond.toFixed(1)),
      ms(r.p50),
      ms(r.p99),
      Number((r.perSecond / pwd.perSecond).toFixed(2)),
    ];
    const table: Table = {
      title: `SSO sign-in handling, sequential, one connection (${opts.store}, n=${n})`,
      columns: ['flow', 'per second', 'p50 ms', 'p99 ms', 'vs password'],
      rows: [
        row('password sign-in (argon2id)', pwd),
        row('SAML ACS post-login', samlRun),
        row('OIDC post-login (incl. local IdP token endpoint)', oidcRun),
      ],
      notes: [
        `IdP responses and authorization round trips are prepared before timing (OIDC in batches of ${OIDC_BATCH}, as the provider's codes live 60 s); the OIDC figure includes the in-process oidc-provider answering the token exchange.`,
      ],
    };
    return {
      area: 'sso',
      store: opts.store,
      tables: [table],
      data: { n, pwd, saml: samlRun, oidc: oidcRun },
      targets: [],
    };
  } finally {
    await idpOidc.close();
    await app.close();
    await bdb.destroy();
  }
}
