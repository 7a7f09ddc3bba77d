import type { Db } from '../src/storage/db.ts';

// ---------------------------------------------------------------------------------------------------------------
// Seeding (not measured): one INSERT ... SELECT generate_series straight into `tenants`.

const sqlArray = (words: string[]) => `ARRAY[${words.map((w) => `'${w.replace(/'/g, "''")}'`).join(',')}]`;
const ADJECTIVES = [
  'Blue',
  'Northern',
  'Silver',
  'Rapid',
  'Bright',
  'Quiet',
  'Golden',
  'Urban',
  'Prime',
  'Coastal',
  'Red',
  'Evergreen',
  'Iron',
  'Crystal',
  'Lucky',
  'Royal',
  'Swift',
  'Hidden',
  'Wild',
  'Grand',
  'Élan',
  'Søndre',
  'Alpine',
  'Sunny',
  'Polar',
  'Modern',
  'Noble',
  'United',
  'First',
  'Global',
];
export const NOUNS = [
  'Harbor',
  'River',
  'Forge',
  'Maple',
  'Cedar',
  'Falcon',
  'Orbit',
  'Beacon',
  'Stone',
  'Willow',
  'Pine',
  'Granite',
  'Meadow',
  'Crest',
  'Lantern',
  'Anchor',
  'Compass',
  'Bridge',
  'Vertex',
  'Atlas',
  'Pioneer',
  'Keystone',
  'Horizon',
  'Cascade',
  'Ember',
  'Juniper',
  'Sparrow',
  'Canyon',
  'Birch',
  'Müller',
];
export const INDUSTRIES = [
  'Logistics',
  'Labs',
  'Analytics',
  'Health',
  'Capital',
  'Foods',
  'Energy',
  'Media',
  'Systems',
  'Partners',
  'Software',
  'Robotics',
  'Insurance',
  'Consulting',
  'Retail',
  'Pharma',
  'Networks',
  'Studios',
  'Foundry',
  'Dynamics',
];
const FORMS = ['Inc.', 'LLC', 'Ltd', 'GmbH', 'S.A.', 'B.V.', 'Pty Ltd', 'AB'];

/**
 * `accounts` live accounts plus one removed account per hundred (every 101st row), so the partial indexes and the
 * `deleted_at IS NULL` conditions have something to skip. Names are "<adjective> <noun> <industry> <form>" drawn
 * from an md5 of the row number (144,000 combinations, so some names repeat, as real ones do); three of four ids are
 * UUIDs (what the API generates), one in four a slug; created_at advances 20 minutes every third row, so equal
 * timestamps exercise the tenant-id tie-breaker.
 */
export async function seedAccounts(db: Db, accounts: number): Promise<{ rows: number; live: number; ms: number }> {
  const rows = Math.round((accounts * 101) / 100);
  const start = performance.now();
  await db.query(`
    INSERT INTO tenants (tenant_id, id, name, status, website, timezone, currency, creator_name, creator_email, metadata,
                         is_reseller, created_at, updated_at, deleted_at)
    SELECT CASE WHEN i % 4 = 0 THEN lower(n.noun) || '-' || lower(n.industry) || '-' || i ELSE md5('t' || i)::uuid::text END,
           md5('id' || i)::uuid,
           n.adjective || ' ' || n.noun || ' ' || n.industry || ' ' || n.form,
           'active',
           'https://www.' || lower(n.noun) || '-' || lower(n.industry) || '.example',
           (ARRAY['Europe/Berlin','America/New_York','Asia/Tokyo','UTC'])[1 + i % 4],
           (ARRAY['EUR','USD','JPY','GBP'])[1 + i % 4],
           'Admin ' || i,
           'admin' || i || '@' || lower(n.noun) || '.example',
           jsonb_build_object('plan', (ARRAY['free','team','business','enterprise'])[1 + i % 4], 'seats', i % 500, 'region', 'eu-' || (i % 3)),
           i % 50 = 0,
           timestamptz '2022-01-01 00:00:00+00' + (i / 3) * interval '20 minutes',
           timestamptz '2022-01-01 00:00:00+00' + (i / 3) * interval '20 minutes',
           CASE WHEN i % 101 = 0 THEN timestamptz '2024-06-01 00:00:00+00' END
      FROM generate_series(1, ${rows}) AS i,
           LATERAL (SELECT decode(md5('n' || i), 'hex') AS h) AS hash,
           LATERAL (SELECT (${sqlArray(ADJECTIVES)})[1 + get_byte(hash.h, 0) % ${ADJECTIVES.length}] AS adjective,
                           (${sqlArray(NOUNS)})[1 + get_byte(hash.h, 1) % ${NOUNS.length}] AS noun,
                           (${sqlArray(INDUSTRIES)})[1 + get_byte(hash.h, 2) % ${INDUSTRIES.length}] AS industry,
                           (${sqlArray(FORMS)})[1 + get_byte(hash.h, 3) % ${FORMS.length}] AS form) AS n`);
  const elapsed = performance.now() - start;
  const { rows: c } = await db.query<{ n: number }>('SELECT count(*)::int AS n FROM tenants WHERE deleted_at IS NULL');
  return { rows, live: c[0].n, ms: elapsed };
}
