import { request } from 'node:https';
import { rootCertificates } from 'node:tls';
import { createGunzip } from 'node:zlib';
import { decrypt } from '../../lib/crypto.ts';
import type { JobHandler } from '../../jobs/runner.ts';
import type { UserMigrationService } from './service.ts';

/**
 * Migration from a third-party identity provider (interface 4.1): `auth0` for now. The fetch job obtains a
 * client-credentials token, reads every user through Auth0's user-export job (`GET /api/v2/users` pages stop at
 * Auth0's 1,000-result window), the roles and their members (checkpoint pagination, no window), turns each user
 * into a migrate-user item (provider local, the account from the configured metadata field) and hands the items to
 * the bulk job, whose status record the caller polls. Password hashes are not readable through the management API:
 * such users land without one and sign-in answers the reset flow.
 */
export const SUPPORTED_PROVIDERS = ['auth0'] as const;
export const IDP_FETCH_JOB = 'migration.users.idp';

export interface OutboundOptions {
  /** Extra PEM CA certificates trusted besides the system ones (tests: a local self-signed server). */
  extraCa?: string;
  timeoutMs?: number;
  /** The longest wait between two reads of the export job's state (default 2 s; the first waits are shorter). */
  exportPollMs?: number;
  /** How long the export job may take before the migration fails (default 1 hour). */
  exportTimeoutMs?: number;
}

const MAX_BODY = 16 * 1024 * 1024;

/** One JSON call over HTTPS with a timeout and a size cap; never follows redirects, never turns TLS checks off. */
export function httpsJson(
  url: string,
  o: OutboundOptions & { method?: string; body?: unknown; token?: string },
): Promise<unknown> {
  const u = new URL(url);
  if (u.protocol !== 'https:') return Promise.reject(new Error(`${url} is not an https URL`));
  const payload = o.body === undefined ? undefined : JSON.stringify(o.body);
  return new Promise((resolve, reject) => {
    const req = request(
      u,
      {
        method: o.method ?? 'GET',
        ca: o.extraCa ? [...rootCertificates, o.extraCa] : undefined,
        timeout: o.timeoutMs ?? 10_000,
        headers: {
          accept: 'application/json',
          ...(payload ? { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) } : {}),
          ...(o.token ? { authorization: `Bearer ${o.token}` } : {}),
        },
      },
      (res) => {
        const chunks: Buffer[] = [];
        let size = 0;
        res.on('data', (c: Buffer) => {
          size += c.length;
          if (size > MAX_BODY) req.destroy(new Error(`${u.origin}${u.pathname} answered more than ${MAX_BODY} bytes`));
          else chunks.push(c);
        });
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          if ((res.statusCode ?? 0) < 200 || (res.statusCode ?? 0) >= 300) {
            return reject(
              new Error(
                `${o.method ?? 'GET'} ${u.origin}${u.pathname} answered ${res.statusCode}: ${text.slice(0, 200)}`,
              ),
            );
          }
          try {
            resolve(JSON.parse(text));
          } catch {
            reject(new Error(`${u.origin}${u.pathname} did not answer JSON`));
          }
        });
      },
    );
    req.on('timeout', () => req.destroy(new Error(`${u.origin} did not answer within ${o.timeoutMs ?? 10_000} ms`)));
    req.on('error', (err) => reject(new Error(`cannot reach ${u.origin}: ${err.message}`)));
    req.end(payload);
  });
}

interface Auth0User {
  user_id: string;
  email?: string;
  email_verified?: boolean;
  name?: string;
  picture?: string;
  username?: string;
  phone_number?: string;
  app_metadata?: Record<string, unknown>;
  user_metadata?: Record<string, unknown>;
}

interface FetchParams {
  domain: string;
  clientId: string;
  secret: string;
  tenantIdFieldName: string;
  isTenantIdOnUserMetadata?: boolean;
}

const PER_PAGE = 100;
const MAX_PAGES = 1000;
/** The export file, uncompressed: past this the migration fails rather than exhaust memory. */
const MAX_EXPORT_BYTES = 1024 * 1024 * 1024;
/** The user fields asked of the export (JSON format: the metadata objects come whole). */
const EXPORT_FIELDS = [
  'user_id',
  'email',
  'email_verified',
  'name',
  'picture',
  'username',
  'phone_number',
  'app_metadata',
  'user_metadata',
];

/**
 * Every user of the Auth0 tenant through its export job: create it (`POST /api/v2/jobs/users-exports`, JSON format),
 * poll `GET /api/v2/jobs/{id}` until `completed`, then download `location`, gzipped NDJSON, one user per line. The
 * download is a pre-signed link on another host: it gets no management token.
 */
async function exportUsers(base: string, token: string, o: OutboundOptions): Promise<Auth0User[]> {
  const job = (await httpsJson(`${base}/api/v2/jobs/users-exports`, {
    ...o,
    token,
    method: 'POST',
    body: { format: 'json', fields: EXPORT_FIELDS.map((name) => ({ name })) },
  })) as { id?: unknown };
  if (typeof job?.id !== 'string') throw new Error('the provider answered the users-export request without a job id');
  const deadline = Date.now() + (o.exportTimeoutMs ?? 3_600_000);
  // A small export is ready within a second; a large one is polled every exportPollMs (the API is rate-limited).
  let wait = 250;
  for (;;) {
    const url = `${base}/api/v2/jobs/${encodeURIComponent(job.id)}`;
    const state = (await httpsJson(url, { ...o, token })) as Record<string, unknown>;
    if (state?.status === 'completed') {
      if (typeof state.location !== 'string') {
        throw new Error(`users-export job ${job.id} completed without a location`);
      }
      return downloadNdjson<Auth0User>(state.location, o);
    }
    if (state?.status === 'failed' || state?.status === 'cancelled') {
      const summary = state.summary ? `: ${JSON.stringify(state.summary).slice(0, 200)}` : '';
      throw new Error(`users-export job ${job.id} ${String(state.status)}${summary}`);
    }
    if (Date.now() > deadline) {
      throw new Error(`users-export job ${job.id} did not complete in time (${String(state?.status)})`);
    }
    await new Promise((r) => setTimeout(r, Math.min(wait, o.exportPollMs ?? 2_000)));
    wait *= 2;
  }
}

/** A gzipped NDJSON file over HTTPS, parsed line by line (no redirects, TLS checked, size capped uncompressed). */
function downloadNdjson<T>(url: string, o: OutboundOptions): Promise<T[]> {
  const u = new URL(url);
  if (u.protocol !== 'https:') return Promise.reject(new Error('the users-export location is not an https URL'));
  const where = `${u.origin}${u.pathname}`;
  return new Promise((resolve, reject) => {
    const tls = { ca: o.extraCa ? [...rootCertificates, o.extraCa] : undefined, timeout: o.timeoutMs ?? 10_000 };
    const req = request(u, tls, (res) => {
      if ((res.statusCode ?? 0) < 200 || (res.statusCode ?? 0) >= 300) {
        res.resume();
        return reject(new Error(`GET ${where} answered ${res.statusCode}`));
      }
      const out: T[] = [];
      let rest = '';
      let size = 0;
      let line = 0;
      const take = (text: string) => {
        line++;
        if (!text.trim()) return;
        try {
          out.push(JSON.parse(text) as T);
        } catch {
          throw new Error(`line ${line} of the users export is not JSON`);
        }
      };
      const gunzip = createGunzip();
      gunzip.on('data', (c: Buffer) => {
        size += c.length;
        if (size > MAX_EXPORT_BYTES) {
          return gunzip.destroy(new Error(`the users export is larger than ${MAX_EXPORT_BYTES} bytes`));
        }
        const lines = (rest + c.toString('utf8')).split('\n');
        rest = lines.pop() ?? '';
        try {
          for (const l of lines) take(l);
        } catch (err) {
          gunzip.destroy(err as Error);
        }
      });
      gunzip.on('end', () => {
        try {
          take(rest);
          resolve(out);
        } catch (err) {
          reject(err);
        }
      });
      gunzip.on('error', (err) => reject(new Error(`the users export from ${where} cannot be read: ${err.message}`)));
      res.on('error', (err) => gunzip.destroy(err));
      res.pipe(gunzip);
    });
    req.on('timeout', () => req.destroy(new Error(`${u.origin} did not answer within ${o.timeoutMs ?? 10_000} ms`)));
    req.on('error', (err) => reject(new Error(`cannot reach ${u.origin}: ${err.message}`)));
    req.end();
  });
}

/** Checkpoint pagination (`take`, then `from` = the previous answer's `next`): no 1,000-result window. */
async function checkpoints<T>(fetchPage: (from: string | undefined) => Promise<unknown>, field: string): Promise<T[]> {
  const all: T[] = [];
  let from: string | undefined;
  for (let n = 0; n < 1_000_000; n++) {
    const body = (await fetchPage(from)) as Record<string, unknown>;
    const list = body?.[field] as T[] | undefined;
    if (!Array.isArray(list)) throw new Error(`the provider answered a page without ${field}`);
    all.push(...list);
    if (typeof body.next !== 'string' || !body.next || list.length === 0) return all;
    from = body.next;
  }
  throw new Error(`too many pages of ${field}`);
}

async function pages<T>(fetchPage: (page: number) => Promise<unknown>, field: string): Promise<T[]> {
  const all: T[] = [];
  for (let page = 0; page < MAX_PAGES; page++) {
    const body = await fetchPage(page);
    const list = (Array.isArray(body) ? body : (body as Record<string, unknown>)?.[field]) as T[] | undefined;
    if (!Array.isArray(list)) throw new Error(`the provider answered a page without ${field}`);
    all.push(...list);
    if (list.length < PER_PAGE) return all;
  }
  throw new Error(`more than ${MAX_PAGES} pages of ${field}`);
}

/** Reads every user (and the roles of each) from an Auth0 tenant and makes migrate-user items of them. */
export async function fetchAuth0(p: FetchParams, o: OutboundOptions): Promise<unknown[]> {
  const base = p.domain.replace(/\/+$/, '');
  const token = (await httpsJson(`${base}/oauth/token`, {
    ...o,
    method: 'POST',
    body: {
      grant_type: 'client_credentials',
      client_id: p.clientId,
      client_secret: p.secret,
      audience: `${base}/api/v2/`,
    },
  })) as { access_token?: unknown };
  if (typeof token?.access_token !== 'string')
    throw new Error('the provider answered the token request without access_token');
  const call = (path: string) => httpsJson(`${base}${path}`, { ...o, token: token.access_token as string });
  const users = await exportUsers(base, token.access_token, o);
  const roles = await pages<{ id: string; name: string }>(
    (page) => call(`/api/v2/roles?page=${page}&per_page=${PER_PAGE}&include_totals=true`),
    'roles',
  );
  const roleNames = new Map<string, string[]>();
  for (const role of roles) {
    const path = `/api/v2/roles/${encodeURIComponent(role.id)}/users?take=${PER_PAGE}`;
    const next = (from: string | undefined) => call(from ? `${path}&from=${encodeURIComponent(from)}` : path);
    const members = await checkpoints<{ user_id: string }>(next, 'users');
    for (const m of members) roleNames.set(m.user_id, [...(roleNames.get(m.user_id) ?? []), role.name]);
  }
  return users.map((u) => {
    const source = (p.isTenantIdOnUserMetadata ? u.user_metadata : u.app_metadata) ?? {};
    const tenantId = source[p.tenantIdFieldName];
    return {
      ...(u.email ? { email: u.email } : {}),
      ...(typeof tenantId === 'string'
        ? { tenantId }
        : typeof tenantId === 'number'
          ? { tenantId: String(tenantId) }
          : {}),
      ...(u.name ? { name: u.name.slice(0, 255) } : {}),
      ...(u.picture ? { profilePictureUrl: u.picture } : {}),
      ...(u.phone_number ? { phoneNumber: u.phone_number } : {}),
      provider: 'local',
      verifyUser: u.email_verified === true,
      metadata: JSON.stringify(u.user_metadata ?? {}),
      // Gatehouse extension carried in the item: role names of the provider, matched to role keys by the importer.
      ...(roleNames.has(u.user_id) ? { providerRoleKeys: roleNames.get(u.user_id) } : {}),
    };
  });
}

/** The fetch job: any failure (unreachable provider, bad credentials) fails the migration with that reason. */
export function idpFetchHandler(service: UserMigrationService, kek: Buffer, o: OutboundOptions): JobHandler {
  return {
    async run(ctx) {
      const p = ctx.job.payload as unknown as FetchParams & { migrationId: string; provider: string };
      if (p.provider !== 'auth0') throw new Error(`provider ${p.provider} is not supported`);
      const items = await fetchAuth0({ ...p, secret: decrypt(kek, p.secret) }, o);
      await service.fillAndImport(p.migrationId, items);
    },
    async onFailed(q, job, error) {
      const id = job.payload.migrationId;
      if (typeof id === 'string')
        await service.failMigration(q, id, `${String(job.payload.provider)} migration failed: ${error}`);
    },
  };
}
