import { pathToFileURL } from 'node:url';

/**
 * Registers the "Sign in with Gatehouse" example (examples/sign-in-with-gatehouse) as an OpenID client of a running
 * Gatehouse, with the environment credentials printed on its first start, and prints CLIENT_ID and CLIENT_SECRET.
 *
 *   GATEHOUSE_CLIENT_ID=… GATEHOUSE_API_KEY=… npx tsx scripts/example-client.ts
 *
 * Optional: GATEHOUSE_URL (http://localhost:8080), APP_URL (http://localhost:3000), PUBLIC_CLIENT=1 (no secret: a
 * public client, PKCE only), EXAMPLE_EMAIL and EXAMPLE_PASSWORD (also creates an account "example" and that user).
 */
export interface ExampleClientOptions {
  gatehouseUrl: string;
  vendorClientId: string;
  vendorApiKey: string;
  appUrl: string;
  publicClient?: boolean;
  user?: { email: string; password: string };
}

const APPS = '/applications/resources/applications/v1';

export async function registerExampleClient(o: ExampleClientOptions) {
  const base = o.gatehouseUrl.replace(/\/+$/, '');
  const appUrl = o.appUrl.replace(/\/+$/, '');
  async function call(path: string, body: unknown, token?: string, headers: Record<string, string> = {}) {
    const res = await fetch(`${base}${path}`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        ...(token ? { authorization: `Bearer ${token}` } : {}),
        ...headers,
      },
      body: JSON.stringify(body),
    });
    const json = (await res.json().catch(() => ({}))) as Record<string, unknown>;
    if (!res.ok) throw new Error(`POST ${path}: ${res.status} ${JSON.stringify(json)}`);
    return json;
  }
  const { token } = await call('/auth/vendor', { clientId: o.vendorClientId, secret: o.vendorApiKey });
  const vendor = String(token);
  const app = await call(
    APPS,
    {
      name: 'Sign in with Gatehouse example',
      // A web application has a client secret (confidential); "other" is a public client.
      type: o.publicClient ? 'other' : 'web',
      appURL: appUrl,
      // The callback, and the home page as the post-logout redirect URI (both are exact matches).
      redirectUris: [`${appUrl}/callback`, `${appUrl}/`],
      isFirstParty: true,
    },
    vendor,
  );
  const clientId = String(app.id);
  let clientSecret: string | undefined;
  if (!o.publicClient) {
    const cred = await call(`${APPS}/credentials/regenerate`, { appId: clientId }, vendor);
    clientSecret = String(cred.clientSecret);
  }
  if (o.user) {
    await call('/tenants/resources/tenants/v1', { tenantId: 'example', name: 'Example' }, vendor);
    const headers = { 'gatehouse-tenant-id': 'example' };
    await call('/identity/resources/users/v1', { email: o.user.email, password: o.user.password }, vendor, headers);
  }
  return { clientId, clientSecret };
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const env = process.env;
  if (!env.GATEHOUSE_CLIENT_ID || !env.GATEHOUSE_API_KEY)
    throw new Error('Set GATEHOUSE_CLIENT_ID and GATEHOUSE_API_KEY (printed on the first start of Gatehouse)');
  const r = await registerExampleClient({
    gatehouseUrl: env.GATEHOUSE_URL ?? 'http://localhost:8080',
    vendorClientId: env.GATEHOUSE_CLIENT_ID,
    vendorApiKey: env.GATEHOUSE_API_KEY,
    appUrl: env.APP_URL ?? 'http://localhost:3000',
    publicClient: env.PUBLIC_CLIENT === '1',
    user:
      env.EXAMPLE_EMAIL && env.EXAMPLE_PASSWORD
        ? { email: env.EXAMPLE_EMAIL, password: env.EXAMPLE_PASSWORD }
        : undefined,
  });
  console.log(`CLIENT_ID=${r.clientId}`);
  if (r.clientSecret) console.log(`CLIENT_SECRET=${r.clientSecret}`);
}
