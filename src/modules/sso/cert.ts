import { generateKeyPairSync, randomBytes, sign, X509Certificate, type KeyObject } from 'node:crypto';

/**
 * A self-signed X.509 certificate for the SAML service provider (it signs AuthnRequests; IdPs read the certificate
 * from our SP metadata). Node can parse certificates but not make them, so the DER is assembled here: RSA 2048,
 * sha256WithRSAEncryption, ten years. Only our own key is ever put in it.
 */
function der(tag: number, body: Buffer): Buffer {
  const len = body.length;
  let head: Buffer;
  if (len < 0x80) head = Buffer.from([tag, len]);
  else if (len < 0x100) head = Buffer.from([tag, 0x81, len]);
  else if (len < 0x10000) head = Buffer.from([tag, 0x82, len >> 8, len & 0xff]);
  else head = Buffer.from([tag, 0x83, len >> 16, (len >> 8) & 0xff, len & 0xff]);
  return Buffer.concat([head, body]);
}
const seq = (...parts: Buffer[]) => der(0x30, Buffer.concat(parts));
const oid = (hex: string) => der(0x06, Buffer.from(hex, 'hex'));
const SHA256_RSA = seq(oid('2a864886f70d01010b'), Buffer.from([0x05, 0x00]));
const name = (cn: string) => seq(der(0x31, seq(oid('550403'), der(0x0c, Buffer.from(cn, 'utf8')))));
const time = (d: Date) => der(0x18, Buffer.from(d.toISOString().replace(/[-:T]/g, '').slice(0, 14) + 'Z'));

export function selfSignedCertificate(commonName: string): { privateKeyPem: string; certificatePem: string } {
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  return {
    privateKeyPem: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
    certificatePem: certificateFor(privateKey, publicKey, commonName),
  };
}

function certificateFor(privateKey: KeyObject, publicKey: KeyObject, commonName: string): string {
  const serial = randomBytes(16);
  serial[0] &= 0x7f;
  const now = new Date();
  const tbs = seq(
    der(0xa0, der(0x02, Buffer.from([2]))),
    der(0x02, serial),
    SHA256_RSA,
    name(commonName),
    seq(time(new Date(now.getTime() - 60_000)), time(new Date(now.getTime() + 10 * 365 * 86400_000))),
    name(commonName),
    publicKey.export({ type: 'spki', format: 'der' }),
  );
  const signature = sign('sha256', tbs, privateKey);
  const cert = seq(tbs, SHA256_RSA, der(0x03, Buffer.concat([Buffer.from([0]), signature])));
  new X509Certificate(cert); // parses, or throws
  const b64 = cert
    .toString('base64')
    .replace(/(.{64})/g, '$1\n')
    .trim();
  return `-----BEGIN CERTIFICATE-----\n${b64}\n-----END CERTIFICATE-----\n`;
}

/** The base64 body of a PEM certificate (what SAML metadata and node-saml's idpCert carry). */
export function certBody(pem: string): string {
  return pem.replace(/-----(BEGIN|END) CERTIFICATE-----/g, '').replace(/\s+/g, '');
}

/** Parses a certificate given as PEM or as a bare base64 body; throws when it is not one. */
export function normaliseCert(value: string): string {
  const body = certBody(value);
  const pem = `-----BEGIN CERTIFICATE-----\n${body.replace(/(.{64})/g, '$1\n').trim()}\n-----END CERTIFICATE-----\n`;
  new X509Certificate(pem);
  return body;
}
