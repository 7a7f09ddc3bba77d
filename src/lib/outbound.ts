import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { Agent as HttpAgent, request as httpRequest, type IncomingMessage } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import { BlockList, isIP } from 'node:net';
import { AppError } from '../http/errors.ts';

/**
 * The address guard of outbound requests (webhooks, and every request an account administrator or a sign-in can
 * point: SAML metadata URLs, OIDC discovery, token, userinfo and JWKS). Loopback, private, link-local (cloud metadata
 * 169.254.169.254 and fd00:ec2::254 included), carrier-grade NAT, multicast and reserved ranges are refused: when a
 * URL is saved (a 4xx naming the field) and again at every connection (the socket's DNS lookup checks the resolved
 * address, so a name that later resolves to a private address is refused too: no check-then-use gap).
 */
const blocked = new BlockList();
for (const [net, prefix] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.0.2.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['198.51.100.0', 24],
  ['203.0.113.0', 24],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
] as const)
  blocked.addSubnet(net, prefix, 'ipv4');
for (const [net, prefix] of [
  ['::', 128],
  ['::1', 128],
  ['fc00::', 7],
  ['fe80::', 10],
  ['fec0::', 10],
  ['ff00::', 8],
  ['2001:db8::', 32],
  ['100::', 64],
] as const)
  blocked.addSubnet(net, prefix, 'ipv6');

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

/** Parses an outbound URL: http(s) only, no credentials in it; a 400 naming `field` otherwise. */
export function parseOutboundUrl(url: string, field: string): URL {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    throw new AppError('VALIDATION', `${field} must be an absolute http(s) URL`);
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:')
    throw new AppError('VALIDATION', `${field} must use the http or https scheme`);
  if (u.username || u.password)
    throw new AppError('VALIDATION', `${field} must not carry credentials (user:password@)`);
  return u;
}

/** The first refused address the URL's host is or resolves to; `null` when the name does not resolve. */
export async function refusedAddressOf(u: URL): Promise<string | null | undefined> {
  const host = u.hostname.replace(/^\[|\]$/g, '');
  if (isIP(host)) return isPrivateAddress(host) ? host : undefined;
  try {
    const all = await new Promise<LookupAddress[]>((resolve, reject) =>
      dnsLookup(host, { all: true, verbatim: true }, (err, a) => (err ? reject(err) : resolve(a))),
    );
    return all.map((a) => a.address).find(isPrivateAddress);
  } catch {
    return null;
  }
}

/**
 * For URLs an account administrator sets (SSO): one answer for every refused host, whether it is a private address,
 * resolves to one or does not resolve, decided before any connection (so it says nothing about ports or services).
 */
export async function assertPublicUrl(url: string, field: string, allowPrivate: boolean): Promise<URL> {
  const u = parseOutboundUrl(url, field);
  if (allowPrivate) return u;
  if ((await refusedAddressOf(u)) !== undefined) {
    throw new AppError(
      'OUTBOUND_URL_REFUSED',
      `${field} must name a host that resolves to public addresses only: loopback, ` +
        'private, link-local and metadata addresses are refused (OUTBOUND_ALLOW_PRIVATE_NETWORKS is off)',
    );
  }
  return u;
}

type LookupCallback = (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

/** A `lookup` for http(s).request that refuses private addresses at connection time. */
export function guardedLookup(
  hostname: string,
  options: { all?: boolean; family?: number | string },
  callback: LookupCallback,
): void {
  dnsLookup(hostname, { ...options, all: true, verbatim: true } as { all: true }, (err, addresses) => {
    if (err) return callback(err, []);
    const bad = addresses.find((a) => isPrivateAddress(a.address));
    if (bad) {
      const message = `refused: ${hostname} resolves to ${bad.address}, a private address`;
      return callback(Object.assign(new Error(message), { code: 'OUTBOUND_ADDRESS_REFUSED' }), []);
    }
    if (options.all) return callback(null, addresses);
    callback(null, addresses[0].address, addresses[0].family);
  });
}

const AGENTS = {
  open: { http: new HttpAgent({ keepAlive: false }), https: new HttpsAgent({ keepAlive: false }) },
  guarded: {
    http: new HttpAgent({ keepAlive: false, lookup: guardedLookup as never }),
    https: new HttpsAgent({ keepAlive: false, lookup: guardedLookup as never }),
  },
};

export interface OutboundOptions {
  allowPrivate: boolean;
  /** The whole exchange, connection to the last byte. */
  timeoutMs: number;
  /** The largest answer read; a larger one fails the request. */
  maxBytes: number;
}

/** Raised for every failure of a guarded fetch: one message whatever happened (refused, unreachable, timed out). */
export class OutboundError extends Error {
  constructor(readonly detail: string) {
    super('the request failed (refused, unreachable, timed out or too large)');
  }
}

const NULL_BODY = new Set([101, 204, 205, 304]);

/**
 * A Fetch API `fetch` over node:http(s) whose connections go through the address guard (unless `allowPrivate`),
 * bounded by a timeout and a size; redirects are never followed (a 3xx is answered as is). Any failure rejects with
 * an OutboundError of one message, so answers cannot tell a closed port from an open one.
 */
export function guardedFetch(o: OutboundOptions) {
  return async (input: string | URL | Request, init: RequestInit = {}): Promise<Response> => {
    const u = new URL(input instanceof Request ? input.url : input);
    if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new OutboundError(`scheme ${u.protocol}`);
    const host = u.hostname.replace(/^\[|\]$/g, '');
    if (!o.allowPrivate && isIP(host) && isPrivateAddress(host))
      throw new OutboundError(`${host} is a private address`);
    const headers = new Headers(init.headers);
    let body: Buffer | undefined;
    if (init.body !== undefined && init.body !== null) {
      body = Buffer.from(await new Response(init.body as BodyInit).arrayBuffer());
      if (init.body instanceof URLSearchParams && !headers.has('content-type')) {
        headers.set('content-type', 'application/x-www-form-urlencoded;charset=UTF-8');
      }
      headers.set('content-length', String(body.byteLength));
    }
    const agent = AGENTS[o.allowPrivate ? 'open' : 'guarded'][u.protocol === 'https:' ? 'https' : 'http'];
    return new Promise<Response>((resolve, reject) => {
      let done = false;
      const fail = (detail: string) => {
        if (done) return;
        done = true;
        clearTimeout(timer);
        init.signal?.removeEventListener('abort', onAbort);
        req.destroy();
        reject(new OutboundError(detail));
      };
      const onAbort = () => fail('aborted');
      const req = (u.protocol === 'https:' ? httpsRequest : httpRequest)(u, {
        method: init.method ?? 'GET',
        agent,
        headers: Object.fromEntries(headers),
      });
      const timer = setTimeout(() => fail(`timed out after ${o.timeoutMs} ms`), o.timeoutMs);
      if (init.signal?.aborted) return fail('aborted');
      init.signal?.addEventListener('abort', onAbort, { once: true });
      req.on('error', (err: NodeJS.ErrnoException) => fail(err.code ?? err.message));
      req.on('response', (res: IncomingMessage) => {
        const chunks: Buffer[] = [];
        let size = 0;
        res.on('data', (c: Buffer) => {
          size += c.byteLength;
          if (size > o.maxBytes) return fail(`answer larger than ${o.maxBytes} bytes`);
          chunks.push(c);
        });
        res.on('error', () => fail('answer interrupted'));
        res.on('end', () => {
          if (done) return;
          done = true;
          clearTimeout(timer);
          init.signal?.removeEventListener('abort', onAbort);
          const h = new Headers();
          for (let i = 0; i < res.rawHeaders.length; i += 2) h.append(res.rawHeaders[i], res.rawHeaders[i + 1]);
          const status = res.statusCode ?? 502;
          resolve(
            new Response(NULL_BODY.has(status) ? null : Buffer.concat(chunks), {
              status,
              statusText: res.statusMessage,
              headers: h,
            }),
          );
        });
      });
      req.end(body);
    });
  };
}
