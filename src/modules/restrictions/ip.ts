import { BlockList, isIP } from 'node:net';
import { AppError } from '../../http/errors.ts';

/** A parsed rule: an address or CIDR range, in canonical text, with a BlockList that answers "is this address in it". */
export interface IpRange {
  family: 4 | 6;
  prefix: number;
  /** Canonical text: the network address, `/prefix` unless it is a single address (/32, /128). */
  text: string;
  list: BlockList;
}

const V4_MAPPED = /^::ffff:(\d{1,3}(?:\.\d{1,3}){3})$/i;

function v4ToBig(a: string): bigint {
  return a.split('.').reduce((acc, part) => (acc << 8n) | BigInt(Number(part)), 0n);
}

function v6ToBig(a: string): bigint {
  let s = a.toLowerCase();
  // An embedded IPv4 tail (::ffff:1.2.3.4, 64:ff9b::1.2.3.4) becomes two hex groups.
  const tail = /(\d{1,3}(?:\.\d{1,3}){3})$/.exec(s);
  if (tail) {
    const n = v4ToBig(tail[1]);
    s = s.slice(0, -tail[1].length) + `${(n >> 16n).toString(16)}:${(n & 0xffffn).toString(16)}`;
  }
  const [head, rest] = s.split('::');
  const h = head ? head.split(':') : [];
  const r = rest !== undefined && rest !== '' ? rest.split(':') : [];
  const groups = rest === undefined ? h : [...h, ...Array(8 - h.length - r.length).fill('0'), ...r];
  return groups.reduce((acc, g) => (acc << 16n) | BigInt(parseInt(g, 16)), 0n);
}

function bigToV4(n: bigint): string {
  return [24n, 16n, 8n, 0n].map((s) => String((n >> s) & 0xffn)).join('.');
}

/** RFC 5952 text: lower case, leading zeros dropped, the longest run (two or more) of zero groups as `::`. */
function bigToV6(n: bigint): string {
  const groups = Array.from({ length: 8 }, (_, i) => Number((n >> BigInt((7 - i) * 16)) & 0xffffn));
  let best = -1;
  let bestLen = 0;
  for (let i = 0; i < 8; ) {
    if (groups[i] !== 0) {
      i++;
      continue;
    }
    let j = i;
    while (j < 8 && groups[j] === 0) j++;
    if (j - i > bestLen && j - i >= 2) [best, bestLen] = [i, j - i];
    i = j;
  }
  const hex = groups.map((g) => g.toString(16));
  if (best < 0) return hex.join(':');
  return `${hex.slice(0, best).join(':')}::${hex.slice(best + bestLen).join(':')}`;
}

function blockListOf(family: 4 | 6, network: string, prefix: number): BlockList {
  const list = new BlockList();
  const type = family === 4 ? 'ipv4' : 'ipv6';
  if (prefix === (family === 4 ? 32 : 128)) list.addAddress(network, type);
  else list.addSubnet(network, prefix, type);
  return list;
}

/**
 * Parses an address (`203.0.113.7`, `2001:db8::1`) or a CIDR range (`203.0.113.0/24`, `2001:db8::/32`). A range
 * with host bits set (`10.0.0.1/8`) is refused with the network it probably means; an IPv4-mapped IPv6 address
 * (`::ffff:1.2.3.4`, or a range inside `::ffff:0:0/96`) is stored as the IPv4 it maps. 400 naming `field` otherwise.
 */
export function parseRange(input: string, field = 'ip'): IpRange {
  const raw = input.trim();
  const bad = (why: string) => new AppError('VALIDATION', `${field} "${raw.slice(0, 100)}" ${why}`);
  const parts = raw.split('/');
  if (parts.length > 2) throw bad('is not an IPv4 or IPv6 address or CIDR range (more than one "/")');
  const [addr, len] = parts;
  if (addr.includes('%')) throw bad('must not carry an IPv6 zone id (%...)');
  const kind = isIP(addr);
  if (kind === 0)
    throw bad('is not an IPv4 or IPv6 address or CIDR range (e.g. 203.0.113.7, 203.0.113.0/24, 2001:db8::/32)');
  let family: 4 | 6 = kind === 4 ? 4 : 6;
  const max = family === 4 ? 32 : 128;
  if (len !== undefined && !/^\d{1,3}$/.test(len)) throw bad(`has a prefix length that is not a number 0-${max}`);
  let prefix = len === undefined ? max : Number(len);
  if (prefix > max) throw bad(`has a prefix length above ${max} for an IPv${family} range`);
  let value = family === 4 ? v4ToBig(addr) : v6ToBig(addr);
  const hostBits = BigInt(max - prefix);
  const network = (value >> hostBits) << hostBits;
  if (network !== value) {
    const text = family === 4 ? bigToV4(network) : bigToV6(network);
    throw bad(`has host bits set after /${prefix}; the range is written ${text}/${prefix}`);
  }
  // IPv4-mapped IPv6 (::ffff:0:0/96 and below) is the IPv4 it maps: sign-ins arrive as IPv4 after normalisation.
  if (family === 6 && prefix >= 96 && value >> 32n === 0xffffn) {
    family = 4;
    prefix -= 96;
    value &= 0xffffffffn;
  }
  const net = family === 4 ? bigToV4(value) : bigToV6(value);
  const full = prefix === (family === 4 ? 32 : 128);
  return { family, prefix, text: full ? net : `${net}/${prefix}`, list: blockListOf(family, net, prefix) };
}

/** A client address as sign-in sees it: zone id dropped, IPv4-mapped IPv6 as IPv4. Undefined when not an address. */
export function normalizeClientIp(ip: string | undefined): { ip: string; family: 4 | 6 } | undefined {
  if (!ip) return undefined;
  let s = ip.trim().replace(/%.*$/, '');
  const mapped = V4_MAPPED.exec(s);
  if (mapped) s = mapped[1];
  const kind = isIP(s);
  if (kind === 0) return undefined;
  return { ip: kind === 6 ? bigToV6(v6ToBig(s)) : s, family: kind === 4 ? 4 : 6 };
}

export function rangeContains(range: IpRange, client: { ip: string; family: 4 | 6 }): boolean {
  return range.family === client.family && range.list.check(client.ip, client.family === 4 ? 'ipv4' : 'ipv6');
}

/** Parsed rules are cached by their canonical text, so the sign-in gate does not parse on every sign-in. */
const cache = new Map<string, IpRange>();
export function cachedRange(text: string): IpRange {
  let r = cache.get(text);
  if (!r) {
    r = parseRange(text);
    if (cache.size > 50_000) cache.clear();
    cache.set(text, r);
  }
  return r;
}
