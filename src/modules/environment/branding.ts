import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type, type Static } from 'typebox';
import { guard } from '../../http/auth.ts';
import type { Db } from '../../storage/db.ts';
import type { Invalidation } from '../../storage/invalidation.ts';
import { createReadCache } from '../../storage/read-cache.ts';
import * as store from './store.ts';

const Color = Type.String({ pattern: '^#[0-9a-fA-F]{3,8}$', description: 'a CSS hex colour, e.g. #1a73e8' });

/**
 * The look of the hosted pages (/account/...): the spec has no theme route, so this is a Gatehouse setting, kept in
 * the environment's settings document under `branding` (no table of its own).
 */
export const Branding = Type.Object({
  name: Type.String({ minLength: 1, maxLength: 100, description: 'shown in the page header and title' }),
  logoUrl: Type.Optional(
    Type.String({ maxLength: 2000, pattern: '^https://', description: 'an https image shown instead of the name' }),
  ),
  primaryColor: Type.Optional(Color),
  textColor: Type.Optional(Color),
});
export type Branding = Static<typeof Branding>;

export const DEFAULT_BRANDING: Branding = { name: 'Gatehouse' };

/** Every hosted page reads the branding: cached in process, dropped when any instance changes it (notified). */
const BRANDING_CACHE_MS = 5000;
/** The settings document's topic (service.ts SETTINGS_TOPIC): branding lives in that document. */
const TOPIC = 'environment.settings';

export function createBranding(db: Db, invalidation?: Invalidation) {
  const cache = createReadCache<Branding>({ ttlMs: BRANDING_CACHE_MS, max: 1 });
  invalidation?.subscribe(TOPIC, () => cache.invalidate());
  const read = async (): Promise<Branding> => {
    const stored = (await store.readSettings(db)).branding as Partial<Branding> | undefined;
    return { ...DEFAULT_BRANDING, ...stored };
  };
  return {
    get: (): Promise<Branding> => cache.get('branding', read),
    async update(b: Branding): Promise<Branding> {
      try {
        // The whole object replaces the stored one, so a colour left out is cleared.
        await store.mergeSettings(db, { branding: b });
      } finally {
        cache.invalidate();
      }
      await invalidation?.publish(db, TOPIC);
      return read();
    },
  };
}
export type BrandingService = ReturnType<typeof createBranding>;

const C = '/identity/resources/configurations/v1/branding';

/** The hosted pages' branding: read by anyone (the pages are public), replaced by the vendor. */
export const brandingRoutes: FastifyPluginAsyncTypebox<{ branding: BrandingService }> = async (app, { branding }) => {
  app.get(
    C,
    {
      config: guard.public,
      schema: {
        tags: ['environment'],
        summary: 'The branding of the hosted sign-in pages (name, logo, colours)',
        response: { 200: Branding },
      },
    },
    async () => branding.get(),
  );
  app.put(
    C,
    {
      config: guard.vendor,
      schema: {
        tags: ['environment'],
        summary: 'Replace the branding of the hosted sign-in pages (omitted colours and logo are cleared)',
        body: Branding,
        response: { 200: Branding },
      },
    },
    async (req) => branding.update(req.body),
  );
};
