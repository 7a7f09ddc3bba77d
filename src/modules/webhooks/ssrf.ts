import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { BlockList, isIP } from 'node:net';
import { AppError } from '../../http/errors.ts';

/**
 * SSRF guard for webhook URLs. Unless WEBHOOK_ALLOW_PRIVATE_NETWORKS is on (the default outside production), a
 * webhook may only reach public addresses: loopback, private, link-local (cloud metadata 169.254.169.254 and
 * fd00:ec2::254 included), carrier-grade NAT, multicast and reserved ranges are refused. Checked when the URL is
 * saved (400 naming the field) and again at every connection (the resolved address is checked in the socket's DNS
 * lookup, so a name that later resolves to a private address is refused too: no check-then-use gap).
 */
const blocked = new BlockList();
for (const [net, prefix] of [
  ['0.0.0.0', 8], ['10.0.0.0', 8], ['100.64.0.0', 10], ['127.0.0.0', 8], ['169.254.0.0', 16], ['172.16.0.0', 12],
  ['192.0.0.0', 24], ['192.0.2.0', 24], ['192.168.0.0', 16], ['198.18.0.0', 15], ['198.51.100.0', 24], ['203.0.113.0', 24],
  ['224.0.0.0', 4], ['240.0.0.0', 4],
] as const) blocked.addSubnet(net, prefix, 'ipv4');
for (const [net, prefix] of [
  ['::', 128], ['::1', 128], ['fc00::', 7], ['fe80::', 10], ['fec0::', 10], ['ff00::', 8], ['2001:db8::', 32], ['100::', 64],
] as const) blocked.addSubnet(net, prefix, 'ipv6');

/** True when the address (IPv4 or IPv6, IPv4-mapped and NAT64 forms included) is not a public unicast address. */
export function isPrivateAddress(address: string): boolean {
  const ip = address.replace(/^\[|\]$/g, '').replace(/%.*$/, '');
  const family = isIP(ip);
  if (family === 4) return blocked.check(ip, 'ipv4');
  if (family !== 6) return true;
  const lower = ip.toLowerCase();
  // IPv4 embedded in IPv6 (::ffff:a.b.c.d, ::a.b.c.d, 64:ff9b::a.b.c.d): judge the IPv4 address.
  const embedded = /^(?:::ffff:(?:0:)?|::|64:ff9b::)(\d+\.\d+\.\d+\.\d+)$/.exec(lower);
  if (embedded) return blocked.check(embedded[1], 'ipv4');
  const hex = /^(?:::ffff:|64:ff9b::)([0-9a-f]{1,4}):([0-9a-f]{1,4})$/.exec(lower);
  if (hex) {
    const n = (parseInt(hex[1], 16) << 16) | parseInt(hex[2], 16);
    return blocked.check([n >>> 24, (n >>> 16) & 255, (n >>> 8) & 255, n & 255].join('.'), 'ipv4');
  }
  return blocked.check(ip, 'ipv6');
}

/** Throws WEBHOOK_URL_REFUSED naming `field` when the URL is not http(s) or (guard on) its host is or resolves to a refused address. */
export async function assertWebhookUrl(url: string, allowPrivate: boolean, field = 'body.url'): Promise<void> {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    throw new AppError('VALIDATION', `${field} must be an absolute http(s) URL`);
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new AppError('VALIDATION', `${field} must use the http or https scheme`);
  if (u.username || u.password) throw new AppError('VALIDATION', `${field} must not carry credentials (user:password@)`);
  if (allowPrivate) return;
  const host = u.hostname.replace(/^\[|\]$/g, '');
  let addresses: string[];
  if (isIP(host)) addresses = [host];
  else {
    try {
      addresses = (await new Promise<LookupAddress[]>((resolve, reject) => dnsLookup(host, { all: true, verbatim: true }, (err, a) => (err ? reject(err) : resolve(a))))).map((a) => a.address);
    } catch {
      throw new AppError('WEBHOOK_URL_REFUSED', `${field} host ${host} does not resolve, so it cannot be checked against private networks`);
    }
  }
  const bad = addresses.find(isPrivateAddress);
  if (bad) throw new AppError('WEBHOOK_URL_REFUSED', `${field} host ${host} is or resolves to ${bad}, a loopback, private, link-local or metadata address (set WEBHOOK_ALLOW_PRIVATE_NETWORKS=true to allow)`);
}

type LookupCallback = (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

/** A `lookup` for http(s).request that refuses private addresses at connection time. */
export function guardedLookup(hostname: string, options: { all?: boolean; family?: number | string }, callback: LookupCallback): void {
  dnsLookup(hostname, { ...options, all: true, verbatim: true } as { all: true }, (err, addresses) => {
    if (err) return callback(err, []);
    const bad = addresses.find((a) => isPrivateAddress(a.address));
    if (bad) {
      const e = Object.assign(new Error(`refused: ${hostname} resolves to ${bad.address}, a private address (WEBHOOK_ALLOW_PRIVATE_NETWORKS is off)`), { code: 'WEBHOOK_ADDRESS_REFUSED' });
      return callback(e, []);
    }
    if (options.all) return callback(null, addresses);
    callback(null, addresses[0].address, addresses[0].family);
  });
}
