import { AppError } from '../../http/errors.ts';
import { newId, randomSecret, sha256Hex } from '../../lib/crypto.ts';
import { isUuid } from '../../lib/pg-errors.ts';
import { iso } from '../../lib/time.ts';
import type { Db } from '../../storage/db.ts';
import type { CreateClient, UpdateClient } from './applications-admin.schema.ts';
import { requireApplication } from './applications-admin.ts';
import * as store from './application-credentials.store.ts';

/**
 * Application credentials (a client secret and a shared secret per application; the client id is the application id)
 * and application clients (agents with their own secret). Like API tokens, a secret is random (32 bytes, base64url),
 * answered whole once, when generated, and stored as SHA-256 only; later reads show `****` and its last four characters.
 */
const mask = (hint: string | null) => (hint ? `****${hint}` : '');
const hintOf = (secret: string) => secret.slice(-4);

function toCredentials(
  appId: string,
  r: store.CredentialsRow | undefined,
  whole: { client?: string; shared?: string } = {},
) {
  return {
    appId,
    clientId: appId,
    clientSecret: whole.client ?? mask(r?.client_secret_hint ?? null),
    sharedSecret: whole.shared ?? mask(r?.shared_secret_hint ?? null),
    clientSecretCreatedAt: iso(r?.client_secret_created_at ?? null),
    sharedSecretCreatedAt: iso(r?.shared_secret_created_at ?? null),
  };
}

function toClient(r: store.ClientRow, secret?: string) {
  return {
    id: r.id,
    appId: r.app_id,
    clientName: r.client_name,
    clientSecret: secret ?? mask(r.secret_hint),
    clientType: r.client_type,
    redirectURLs: r.redirect_urls,
    ...(r.external_metadata !== null ? { externalMetadata: r.external_metadata } : {}),
    createdAt: iso(r.created_at)!,
    updatedAt: iso(r.updated_at)!,
  };
}

export type ApplicationCredentials = ReturnType<typeof createApplicationCredentials>;

export function createApplicationCredentials(deps: { db: Db }) {
  const { db } = deps;

  async function regenerate(appId: string, which: 'client' | 'shared') {
    const secret = randomSecret(32);
    return db.transaction(async (tx) => {
      const app = await requireApplication(tx, appId);
      const row = await store.setSecret(tx, app.id, which, sha256Hex(secret), hintOf(secret));
      return toCredentials(app.id, row, { [which]: secret });
    });
  }

  async function requireClient(id: string) {
    const row = isUuid(id) ? await store.findClient(db, id) : undefined;
    if (!row) throw new AppError('APPLICATION_CLIENT_NOT_FOUND', `No application client with id ${id.slice(0, 64)}`);
    return row;
  }

  return {
    /**
     * An application as an OpenID client (src/modules/oidc): undefined for an unknown or inactive one. The secret is
     * only its SHA-256 (the provider compares the hash of what a client sends).
     */
    async openIdClient(appId: string) {
      const app = isUuid(appId) ? await store.openIdClientRow(db, appId) : undefined;
      if (!app) return undefined;
      return {
        id: app.id,
        name: app.name,
        type: app.app_type,
        redirectUris: app.redirect_uris,
        isFirstParty: app.is_first_party,
        clientSecretHash: app.client_secret_hash ?? undefined,
      };
    },
    async credentials(appId: string) {
      const app = await requireApplication(db, appId);
      return toCredentials(app.id, await store.findCredentials(db, app.id));
    },
    regenerateClientSecret: (appId: string) => regenerate(appId, 'client'),
    regenerateSharedSecret: (appId: string) => regenerate(appId, 'shared'),

    /** Creates a client of `appId` (body appId, else the application header); the secret is in this answer only. */
    async createClient(body: CreateClient, headerAppId: string | undefined) {
      const appId = body.appId ?? headerAppId;
      if (!appId)
        throw new AppError(
          'APPLICATION_HEADER_REQUIRED',
          'body.appId or the header gatehouse-application-id must name the application',
        );
      const secret = randomSecret(32);
      return db.transaction(async (tx) => {
        const app = await requireApplication(tx, appId);
        const row = await store.insertClient(tx, {
          id: newId(),
          app_id: app.id,
          client_name: body.clientName,
          client_type: body.clientType,
          redirect_urls: body.redirectURLs ?? [],
          external_metadata: (body.externalMetadata ?? null) as Record<string, unknown> | null,
          secret_hash: sha256Hex(secret),
          secret_hint: hintOf(secret),
        });
        return toClient(row, secret);
      });
    },
    async clientsOf(appId: string) {
      const app = await requireApplication(db, appId);
      return (await store.clientsOfApp(db, app.id)).map((r) => toClient(r));
    },
    client: async (id: string) => toClient(await requireClient(id)),
    async updateClient(id: string, body: UpdateClient) {
      await requireClient(id);
      const row = await store.updateClient(db, id, {
        client_name: body.clientName,
        redirect_urls: body.redirectURLs,
        external_metadata: body.externalMetadata as Record<string, unknown> | undefined,
      });
      if (!row) throw new AppError('APPLICATION_CLIENT_NOT_FOUND', `No application client with id ${id.slice(0, 64)}`);
      return toClient(row);
    },
    async deleteClient(id: string) {
      if (!isUuid(id) || !(await store.deleteClient(db, id)))
        throw new AppError('APPLICATION_CLIENT_NOT_FOUND', `No application client with id ${id.slice(0, 64)}`);
    },
  };
}
