/**
 * `npm run bench -- signin`: the sign-in methods, each section in its own app over a fresh database.
 *   passwordless — a full email-code sign-in (pre-login, message delivered to a local SMTP server, post-login):
 *                  flows/s and p50 at 10 concurrent users (bench/signin-passwordless.ts)
 *   mfa          — TOTP MFA sign-in against plain password sign-in in the same run (bench/signin-mfa.ts)
 */
import type { AreaResult, BenchOptions } from './lib.ts';
import { passwordlessSignin } from './signin-passwordless.ts';
import { runSigninMfa } from './signin-mfa.ts';

export async function run(o: BenchOptions): Promise<AreaResult> {
  const want = (s: string) => !o.only || o.only.includes(s);
  const result: AreaResult = { area: 'signin', store: o.store, tables: [], data: {}, targets: [] };
  if (want('passwordless')) {
    const r = await passwordlessSignin(o);
    result.tables.push(...r.tables);
    result.targets.push(...r.targets);
    result.data.passwordless = r.data;
  }
  if (want('mfa')) {
    const r = await runSigninMfa(o);
    result.tables.push(...r.tables);
    result.targets.push(...r.targets);
    result.data.mfa = r.data;
  }
  return result;
}
