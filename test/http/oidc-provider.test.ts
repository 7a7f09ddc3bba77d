import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import * as client from 'openid-client';
import { startBrowserApp, type BrowserApp } from '../helpers/browser.ts';
import { account, signedIn, user, type User } from '../fixtures/builders.ts';
import { authorizationRequest, browse, Jar, rpApp, rpConfig, type RpApp, submit } from '../fixtures/oidc-rp.ts';

let t: BrowserApp;
let web: RpApp;
let alice: User;
const CB = 'https://rp.example.test/callback';

const claimsOf = (jwt: string) => JSON.parse(Buffer.from(jwt.split('.')[1]!, 'base64url').toString());

/** A browser signed in as `who` (the API sign-in sets gh_refresh, as the hosted sign-in page does). */
async function browserOf(who: User) {
  const jar = new Jar();
  jar.cookies.set('gh_refresh', (await signedIn(t, who)).cookie);
  return jar;
}

/** The whole front channel: authorization request to the client's callback URL. */
async function codeFlow(config: client.Configuration, app: RpApp, jar: Jar, extra: Record<string, string> = {}) {
  const req = await authorizationRequest(config, app, extra);
  const landing = await browse(t.origin, req.url, jar);
  return { ...req, landing };
}

before(async () => {
  t = await startBrowserApp({ OIDC_PROVIDER_ENABLED: 'true' });
  const acc = await account(t);
  alice = await user(t, acc, { name: 'Alice', verified: true });
  web = await rpApp(t, { redirectUri: CB });
});
after(async () => t?.close());

describe('confidential client', () => {
  test('code flow with client_secret_basic: tokens, id_token claims', async () => {
    const config = await rpConfig(t.origin, web, 'basic');
    const jar = await browserOf(alice);
    const { landing, checks } = await codeFlow(config, web, jar);
    assert.equal(landing.redirect?.origin + landing.redirect!.pathname, CB, landing.body.slice(0, 400));
    const tokens = await client.authorizationCodeGrant(config, landing.redirect!, checks);
    const id = tokens.claims()!;
    assert.equal(id.sub, alice.id);
    assert.equal(id.nonce, checks.expectedNonce);
    console.log(id); const c = claimsOf(tokens.access_token); console.log(c.scope, c.sid, c.aud, Object.keys(tokens));
  });
});
