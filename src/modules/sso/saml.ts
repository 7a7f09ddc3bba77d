import { DOMParser } from '@xmldom/xmldom';
import { SAML, ValidateInResponseTo, type CacheProvider, type Profile } from '@node-saml/node-saml';
import { AppError } from '../../http/errors.ts';
import { certBody, normaliseCert } from './cert.ts';

/**
 * The SAML 2.0 service-provider side, over @node-saml/node-saml (signature checks, conditions, audience, clock skew,
 * InResponseTo). Gatehouse adds: an allow-list of signature and digest algorithms checked before node-saml runs
 * (SHA-1 is refused), and the request id bound to the server-side state instead of node-saml's in-memory cache.
 */

const MD = 'urn:oasis:names:tc:SAML:2.0:metadata';
const DSIG = 'http://www.w3.org/2000/09/xmldsig#';
const REDIRECT = 'urn:oasis:names:tc:SAML:2.0:bindings:HTTP-Redirect';
const POST = 'urn:oasis:names:tc:SAML:2.0:bindings:HTTP-POST';

export const SAFE_SIGNATURE_ALGORITHMS = new Set([
  'http://www.w3.org/2001/04/xmldsig-more#rsa-sha256',
  'http://www.w3.org/2001/04/xmldsig-more#rsa-sha384',
  'http://www.w3.org/2001/04/xmldsig-more#rsa-sha512',
  'http://www.w3.org/2001/04/xmldsig-more#ecdsa-sha256',
  'http://www.w3.org/2001/04/xmldsig-more#ecdsa-sha384',
  'http://www.w3.org/2001/04/xmldsig-more#ecdsa-sha512',
]);
export const SAFE_DIGEST_ALGORITHMS = new Set([
  'http://www.w3.org/2001/04/xmlenc#sha256',
  'http://www.w3.org/2001/04/xmldsig-more#sha384',
  'http://www.w3.org/2001/04/xmlenc#sha512',
]);

/** Clock skew accepted on NotBefore / NotOnOrAfter (milliseconds). */
export const CLOCK_SKEW_MS = 120_000;

function parse(xml: string, what: string): Document {
  const errors: string[] = [];
  const doc = new DOMParser({
    errorHandler: (level: string, msg: unknown) => void (level !== 'warning' && errors.push(String(msg))),
  }).parseFromString(xml, 'text/xml') as unknown as Document;
  if (errors.length || !doc?.documentElement)
    throw new AppError('SSO_INVALID_METADATA', `${what} is not well-formed XML`);
  return doc;
}

export interface IdpMetadata {
  entityId: string;
  ssoUrl: string;
  certs: string[];
}

/** Reads the IdP's entity id, single sign-on URL (HTTP-Redirect preferred, else HTTP-POST) and signing certificates. */
export function parseIdpMetadata(xml: string): IdpMetadata {
  const doc = parse(xml, 'metadata');
  const entity = doc.getElementsByTagNameNS(MD, 'EntityDescriptor')[0];
  const idp = doc.getElementsByTagNameNS(MD, 'IDPSSODescriptor')[0];
  if (!entity || !idp)
    throw new AppError('SSO_INVALID_METADATA', 'metadata must be a SAML EntityDescriptor with an IDPSSODescriptor');
  const services = Array.from(idp.getElementsByTagNameNS(MD, 'SingleSignOnService'));
  const pick =
    services.find((s) => s.getAttribute('Binding') === REDIRECT) ??
    services.find((s) => s.getAttribute('Binding') === POST);
  const ssoUrl = pick?.getAttribute('Location') ?? '';
  if (!/^https?:\/\//.test(ssoUrl))
    throw new AppError(
      'SSO_INVALID_METADATA',
      'metadata has no SingleSignOnService with an HTTP-Redirect or HTTP-POST binding',
    );
  const certs: string[] = [];
  for (const kd of Array.from(idp.getElementsByTagNameNS(MD, 'KeyDescriptor'))) {
    const use = kd.getAttribute('use');
    if (use && use !== 'signing') continue;
    for (const c of Array.from(kd.getElementsByTagNameNS(DSIG, 'X509Certificate'))) {
      try {
        certs.push(normaliseCert(c.textContent ?? ''));
      } catch {
        throw new AppError('SSO_INVALID_METADATA', 'metadata holds a signing X509Certificate that does not parse');
      }
    }
  }
  if (!certs.length)
    throw new AppError('SSO_INVALID_METADATA', 'metadata has no signing certificate (KeyDescriptor use="signing")');
  return { entityId: entity.getAttribute('entityID') ?? '', ssoUrl, certs: [...new Set(certs)] };
}

/** Refuses a response whose signatures use an algorithm outside the allow-list, or that carries no signature at all. */
export function assertSafeAlgorithms(responseXml: string): void {
  const doc = parse(responseXml, 'SAMLResponse');
  const sigs = Array.from(doc.getElementsByTagNameNS(DSIG, 'SignatureMethod'));
  if (!sigs.length)
    throw new AppError(
      'SSO_INVALID_ASSERTION',
      'SAMLResponse is not signed; the assertion or the response must carry a signature',
    );
  for (const s of sigs) {
    const alg = s.getAttribute('Algorithm') ?? '';
    if (!SAFE_SIGNATURE_ALGORITHMS.has(alg))
      throw new AppError(
        'SSO_UNSAFE_ALGORITHM',
        `SAMLResponse is signed with ${alg || 'no algorithm'}; only RSA/ECDSA with SHA-256 or stronger is accepted`,
      );
  }
  for (const d of Array.from(doc.getElementsByTagNameNS(DSIG, 'DigestMethod'))) {
    const alg = d.getAttribute('Algorithm') ?? '';
    if (!SAFE_DIGEST_ALGORITHMS.has(alg))
      throw new AppError(
        'SSO_UNSAFE_ALGORITHM',
        `SAMLResponse uses digest ${alg || 'none'}; only SHA-256 or stronger is accepted`,
      );
  }
}

/** The assertion's ID and its latest NotOnOrAfter (for the replay store). */
export function assertionFacts(responseXml: string): { id: string; notOnOrAfter: Date } {
  const doc = parse(responseXml, 'SAMLResponse');
  const assertion = doc.getElementsByTagNameNS('urn:oasis:names:tc:SAML:2.0:assertion', 'Assertion')[0];
  const id = assertion?.getAttribute('ID') ?? '';
  if (!id)
    throw new AppError(
      'SSO_INVALID_ASSERTION',
      'SAMLResponse carries no Assertion with an ID (encrypted assertions are not supported)',
    );
  const times = [
    ...Array.from(doc.getElementsByTagNameNS('urn:oasis:names:tc:SAML:2.0:assertion', 'Conditions')),
    ...Array.from(doc.getElementsByTagNameNS('urn:oasis:names:tc:SAML:2.0:assertion', 'SubjectConfirmationData')),
  ]
    .map((e) => Date.parse(e.getAttribute('NotOnOrAfter') ?? ''))
    .filter((t) => Number.isFinite(t));
  return { id, notOnOrAfter: new Date((times.length ? Math.max(...times) : Date.now() + 3600_000) + CLOCK_SKEW_MS) };
}

/**
 * AuthnContextClassRef values that name a multi-factor sign-in at the IdP (SAML 2.0 authn context classes for
 * two-factor and token methods, REFEDS MFA, Microsoft Entra's multipleauthn).
 */
export const SAML_MFA_CONTEXTS = new Set([
  'urn:oasis:names:tc:SAML:2.0:ac:classes:MobileTwoFactorContract',
  'urn:oasis:names:tc:SAML:2.0:ac:classes:MobileTwoFactorUnregistered',
  'urn:oasis:names:tc:SAML:2.0:ac:classes:TimeSyncToken',
  'urn:oasis:names:tc:SAML:2.0:ac:classes:SmartcardPKI',
  'https://refeds.org/profile/mfa',
  'http://schemas.microsoft.com/claims/multipleauthn',
]);

/** The AuthnContextClassRef values of the assertion node-saml verified (read from that assertion, not the raw response). */
export function authnContexts(profile: Profile): string[] {
  const xml = profile.getAssertionXml?.();
  if (!xml) return [];
  const doc = parse(xml, 'Assertion');
  return Array.from(doc.getElementsByTagNameNS('urn:oasis:names:tc:SAML:2.0:assertion', 'AuthnContextClassRef')).map(
    (e) => (e.textContent ?? '').trim(),
  );
}

export interface SpSide {
  entityId: string;
  acsUrl: string;
  privateKeyPem: string;
  certificatePem: string;
}

export interface IdpSide {
  ssoUrl: string;
  entityId: string;
  certs: string[];
  signRequest: boolean;
}

/** A cache that knows exactly one request id: the one bound to this flow's server-side state. */
function oneRequest(expected?: string, onSave?: (id: string) => void): CacheProvider {
  return {
    saveAsync: async (key: string, value: string) => {
      onSave?.(key);
      return { value, createdAt: Date.now() };
    },
    getAsync: async (key: string) => (expected && key === expected ? new Date().toISOString() : null),
    removeAsync: async (key: string | null) => key,
  };
}

function client(sp: SpSide, idp: IdpSide, cache: CacheProvider): SAML {
  return new SAML({
    callbackUrl: sp.acsUrl,
    entryPoint: idp.ssoUrl,
    issuer: sp.entityId,
    audience: sp.entityId,
    idpIssuer: idp.entityId || undefined,
    idpCert: idp.certs.map((c) => `-----BEGIN CERTIFICATE-----\n${c}\n-----END CERTIFICATE-----`),
    wantAssertionsSigned: true,
    wantAuthnResponseSigned: false,
    acceptedClockSkewMs: CLOCK_SKEW_MS,
    signatureAlgorithm: 'sha256',
    digestAlgorithm: 'sha256',
    privateKey: idp.signRequest ? sp.privateKeyPem : undefined,
    validateInResponseTo: ValidateInResponseTo.always,
    cacheProvider: cache,
    identifierFormat: 'urn:oasis:names:tc:SAML:1.1:nameid-format:emailAddress',
    disableRequestedAuthnContext: true,
  });
}

/** Builds the AuthnRequest (HTTP-Redirect binding, signed when the configuration asks) and answers its URL and id. */
export async function authnRequestUrl(
  sp: SpSide,
  idp: IdpSide,
  relayState: string,
): Promise<{ url: string; requestId: string }> {
  let requestId = '';
  const saml = client(
    sp,
    idp,
    oneRequest(undefined, (id) => (requestId = id)),
  );
  const url = await saml.getAuthorizeUrlAsync(relayState, undefined, {});
  return { url, requestId };
}

/** Verifies a SAMLResponse (HTTP-POST binding) for the request id of this flow; answers node-saml's profile. */
export async function validateResponse(
  sp: SpSide,
  idp: IdpSide,
  samlResponse: string,
  requestId: string,
): Promise<Profile> {
  const saml = client(sp, idp, oneRequest(requestId));
  try {
    const { profile } = await saml.validatePostResponseAsync({ SAMLResponse: samlResponse });
    if (!profile) throw new Error('no profile in the response');
    return profile;
  } catch (err) {
    if (err instanceof AppError) throw err;
    throw new AppError('SSO_INVALID_ASSERTION', `SAMLResponse was refused: ${(err as Error).message}`);
  }
}

/** SP metadata for one account (entity id, ACS with the HTTP-POST binding, signing certificate). */
export function spMetadata(sp: SpSide, signRequests: boolean): string {
  const saml = new SAML({
    callbackUrl: sp.acsUrl,
    issuer: sp.entityId,
    idpCert: 'unused',
    wantAssertionsSigned: true,
    privateKey: sp.privateKeyPem,
    identifierFormat: 'urn:oasis:names:tc:SAML:1.1:nameid-format:emailAddress',
  });
  const xml = saml.generateServiceProviderMetadata(null, [sp.certificatePem]);
  return signRequests ? xml.replace('AuthnRequestsSigned="false"', 'AuthnRequestsSigned="true"') : xml;
}

export { certBody };
