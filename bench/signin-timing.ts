import { RAISED_SIGNIN_LIMITS } from './lib-app.ts';
import { startTestApp } from '../test/helpers/harness.ts';

/**
 * tsx bench/signin-timing.ts [rounds]
 *
 * Wrong-password sign-ins for a known email against an unknown one, interleaved (PGlite, in process, through the
 * HTTP stack with inject): the median of each and their ratio. The answer's time must not tell whether the email
 * has a user. Bounded: `rounds` pairs (default 300), after 20 warm-up pairs. Lockout is off so the known user keeps
 * failing the same way.
 */

const rounds = Number(process.argv[2] ?? 300);
const t = await startTestApp(RAISED_SIGNIN_LIMITS);
const vendor = await t.vendorToken();
await t.call('POST', '/tenants/resources/tenants/v1', { token: vendor, body: { tenantId: 'timing', name: 'timing' } });
const lockout = await t.call('PATCH', '/identity/resources/configurations/v1/lockout-policy', {
  token: vendor,
  body: { enabled: false },
});
if (lockout.status >= 300) throw new Error(JSON.stringify(lockout.body));
const made = await t.call('POST', '/identity/resources/users/v1', {
  token: vendor,
  headers: { 'gatehouse-tenant-id': 'timing' },
  body: { email: 'known@timing.test', password: 'Right-Password-123!', verified: true },
});
if (made.status !== 201) throw new Error(JSON.stringify(made.body));

async function attempt(email: string): Promise<number> {
  const start = process.hrtime.bigint();
  const r = await t.app.inject({
    method: 'POST',
    url: '/identity/resources/auth/v1/user',
    payload: { email, password: 'Wrong-Password-456!' },
  });
  const ms = Number(process.hrtime.bigint() - start) / 1e6;
  if (r.statusCode !== 401) throw new Error(`${email}: ${r.statusCode} ${r.body}`);
  return ms;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const known: number[] = [];
const unknown: number[] = [];
for (let i = 0; i < rounds + 20; i++) {
  // Alternate which goes first, so a drift in load falls on both.
  const pair =
    i % 2
      ? [
          ['known', 'known@timing.test'],
          ['unknown', `nobody${i}@timing.test`],
        ]
      : [
          ['unknown', `nobody${i}@timing.test`],
          ['known', 'known@timing.test'],
        ];
  for (const [kind, email] of pair) {
    const ms = await attempt(email);
    if (i >= 20) (kind === 'known' ? known : unknown).push(ms);
  }
}
const k = median(known);
const u = median(unknown);
// Per pair (same moment, same load): the median of known / unknown.
const pairRatio = median(known.map((x, i) => x / unknown[i]));
console.log(
  JSON.stringify({
    rounds,
    knownMedianMs: +k.toFixed(2),
    unknownMedianMs: +u.toFixed(2),
    ratio: +(k / u).toFixed(3),
    medianPairRatio: +pairRatio.toFixed(3),
  }),
);
await t.close();
