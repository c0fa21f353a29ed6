/**
 * The ONE SSRF guard of outgoing webhooks: which hosts and addresses a webhook (or Slack) URL may never reach.
 * Built from the IANA IPv4 and IPv6 Special-Purpose Address Registries
 * (https://www.iana.org/assignments/iana-ipv4-special-registry, …/iana-ipv6-special-registry), plus the
 * multicast blocks and the deprecated IPv6 ranges (IPv4-compatible, site-local) that are not in them, plus the
 * IPv6 space IANA has not allocated to global unicast (only 2000::/3 is).
 *
 * Used when a rule is saved (`urlHostProblem`: the host is an IP literal or a name such as `localhost`) and after
 * DNS resolution when delivering (`addressProblem` on each resolved address).
 */
import { isIP } from 'node:net';

export interface SpecialRange {
  /** `10.0.0.0/8`, `64:ff9b::/96`. */
  cidr: string;
  /** The registry's name of the block. */
  name: string;
  /** Where it is defined. */
  source: string;
  family: 4 | 6;
  /** Loopback: the only non-public receivers the local stack may deliver to. */
  loopback?: true;
}

/** IPv4: every entry of the special-purpose registry, plus multicast (RFC 5771). */
const IPV4: ReadonlyArray<[cidr: string, name: string, source: string, loopback?: true]> = [
  ['0.0.0.0/8', '"This network"', 'RFC 791'],
  ['0.0.0.0/32', '"This host on this network"', 'RFC 1122'],
  ['10.0.0.0/8', 'Private-Use', 'RFC 1918'],
  ['100.64.0.0/10', 'Shared Address Space (CGNAT)', 'RFC 6598'],
  ['127.0.0.0/8', 'Loopback', 'RFC 1122', true],
  ['169.254.0.0/16', 'Link Local', 'RFC 3927'],
  ['172.16.0.0/12', 'Private-Use', 'RFC 1918'],
  ['192.0.0.0/24', 'IETF Protocol Assignments', 'RFC 6890'],
  ['192.0.0.0/29', 'IPv4 Service Continuity Prefix (DS-Lite)', 'RFC 7335'],
  ['192.0.0.8/32', 'IPv4 dummy address', 'RFC 7600'],
  ['192.0.0.9/32', 'Port Control Protocol Anycast', 'RFC 7723'],
  ['192.0.0.10/32', 'Traversal Using Relays around NAT Anycast', 'RFC 8155'],
  ['192.0.0.170/31', 'NAT64/DNS64 Discovery', 'RFC 8880'],
  ['192.0.2.0/24', 'Documentation (TEST-NET-1)', 'RFC 5737'],
  ['192.31.196.0/24', 'AS112-v4', 'RFC 7535'],
  ['192.52.193.0/24', 'AMT', 'RFC 7450'],
  ['192.88.99.0/24', 'Deprecated (6to4 Relay Anycast)', 'RFC 7526'],
  ['192.168.0.0/16', 'Private-Use', 'RFC 1918'],
  ['192.175.48.0/24', 'Direct Delegation AS112 Service', 'RFC 7534'],
  ['198.18.0.0/15', 'Benchmarking', 'RFC 2544'],
  ['198.51.100.0/24', 'Documentation (TEST-NET-2)', 'RFC 5737'],
  ['203.0.113.0/24', 'Documentation (TEST-NET-3)', 'RFC 5737'],
  ['224.0.0.0/4', 'Multicast', 'RFC 5771'],
  ['240.0.0.0/4', 'Reserved', 'RFC 1112'],
  ['255.255.255.255/32', 'Limited Broadcast', 'RFC 919'],
];

/** IPv6: every entry of the special-purpose registry, the deprecated blocks, multicast, and what is not unicast. */
const IPV6: ReadonlyArray<[cidr: string, name: string, source: string, loopback?: true]> = [
  ['::1/128', 'Loopback Address', 'RFC 4291', true],
  ['::/128', 'Unspecified Address', 'RFC 4291'],
  ['::/96', 'IPv4-Compatible IPv6 Address (deprecated)', 'RFC 4291'],
  ['::ffff:0:0/96', 'IPv4-mapped Address', 'RFC 4291'],
  ['64:ff9b::/96', 'IPv4-IPv6 Translat.', 'RFC 6052'],
  ['64:ff9b:1::/48', 'IPv4-IPv6 Translat. (local use)', 'RFC 8215'],
  ['100::/64', 'Discard-Only Address Block', 'RFC 6666'],
  ['100:0:0:1::/64', 'Dummy IPv6 Prefix', 'RFC 9780'],
  ['2001::/23', 'IETF Protocol Assignments', 'RFC 2928'],
  ['2001::/32', 'TEREDO', 'RFC 4380'],
  ['2001:1::1/128', 'Port Control Protocol Anycast', 'RFC 7723'],
  ['2001:1::2/128', 'Traversal Using Relays around NAT Anycast', 'RFC 8155'],
  ['2001:1::3/128', 'DNS-SD Service Registration Protocol Anycast', 'RFC 9665'],
  ['2001:2::/48', 'Benchmarking', 'RFC 5180'],
  ['2001:3::/32', 'AMT', 'RFC 7450'],
  ['2001:4:112::/48', 'AS112-v6', 'RFC 7535'],
  ['2001:10::/28', 'Deprecated (previously ORCHID)', 'RFC 4843'],
  ['2001:20::/28', 'ORCHIDv2', 'RFC 7343'],
  ['2001:30::/28', 'Drone Remote ID Protocol Entity Tags (DETs) Prefix', 'RFC 9374'],
  ['2001:db8::/32', 'Documentation', 'RFC 3849'],
  ['2002::/16', '6to4', 'RFC 3056'],
  ['2620:4f:8000::/48', 'Direct Delegation AS112 Service', 'RFC 7534'],
  ['3fff::/20', 'Documentation', 'RFC 9637'],
  ['5f00::/16', 'Segment Routing (SRv6) SIDs', 'RFC 9602'],
  ['fc00::/7', 'Unique-Local', 'RFC 4193'],
  ['fe80::/10', 'Link-Local Unicast', 'RFC 4291'],
  ['fec0::/10', 'Site-Local (deprecated)', 'RFC 3879'],
  ['ff00::/8', 'Multicast', 'RFC 4291'],
  // IANA IPv6 Address Space: outside 2000::/3 nothing is global unicast (reserved by the IETF).
  ['::/3', 'Reserved by IETF (not global unicast)', 'RFC 4291'],
  ['4000::/2', 'Reserved by IETF (not global unicast)', 'RFC 4291'],
  ['8000::/2', 'Reserved by IETF (not global unicast)', 'RFC 4291'],
  ['c000::/3', 'Reserved by IETF (not global unicast)', 'RFC 4291'],
  ['e000::/4', 'Reserved by IETF (not global unicast)', 'RFC 4291'],
  ['f000::/5', 'Reserved by IETF (not global unicast)', 'RFC 4291'],
  ['f800::/6', 'Reserved by IETF (not global unicast)', 'RFC 4291'],
  ['fe00::/9', 'Reserved by IETF (not global unicast)', 'RFC 4291'],
];

const toRange = (family: 4 | 6) => ([cidr, name, source, loopback]: readonly [string, string, string, true?]): SpecialRange => ({
  cidr,
  name,
  source,
  family,
  ...(loopback ? { loopback } : {}),
});

/** Every special-purpose range, IPv4 then IPv6, in registry order. */
export const SPECIAL_RANGES: readonly SpecialRange[] = [...IPV4.map(toRange(4)), ...IPV6.map(toRange(6))];

// ---------------------------------------------------------------------------------------------------------------
// Address arithmetic (BigInt: one code path for both families)

/** An IP literal (brackets allowed, zone id dropped) → its family and value; undefined when it is not one. */
export function parseAddress(text: string): { family: 4 | 6; value: bigint } | undefined {
  const address = text.replace(/^\[(.*)\]$/, '$1').replace(/%.*$/, '');
  const family = isIP(address);
  if (family === 4) return { family, value: ipv4Value(address) };
  if (family === 6) return { family, value: ipv6Value(address) };
  return undefined;
}

function ipv4Value(address: string): bigint {
  return address.split('.').reduce((n, part) => (n << 8n) | BigInt(Number(part)), 0n);
}

function ipv6Value(address: string): bigint {
  let text = address.toLowerCase();
  // A dotted IPv4 tail (::ffff:127.0.0.1) → two hex groups.
  const dotted = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (dotted) {
    const v4 = ipv4Value(dotted[1]!);
    text = `${text.slice(0, dotted.index)}${(v4 >> 16n).toString(16)}:${(v4 & 0xffffn).toString(16)}`;
  }
  const [head = '', tail] = text.split('::');
  const groups = (part: string) => (part === '' ? [] : part.split(':'));
  const h = groups(head);
  const t = tail === undefined ? [] : groups(tail);
  const all = tail === undefined ? h : [...h, ...Array<string>(8 - h.length - t.length).fill('0'), ...t];
  return all.reduce((n, g) => (n << 16n) | BigInt(parseInt(g, 16)), 0n);
}

interface CompiledRange {
  range: SpecialRange;
  prefix: number;
  first: bigint;
  last: bigint;
}

const bits = (family: 4 | 6) => (family === 4 ? 32 : 128);

function compile(range: SpecialRange): CompiledRange {
  const [network = '', length = ''] = range.cidr.split('/');
  const parsed = parseAddress(network);
  if (!parsed || parsed.family !== range.family) throw new Error(`bad range ${range.cidr}`);
  const prefix = Number(length);
  const hostBits = BigInt(bits(range.family) - prefix);
  const first = (parsed.value >> hostBits) << hostBits;
  return { range, prefix, first, last: first + (1n << hostBits) - 1n };
}

/** Most specific first: an address is named by the smallest block that holds it. */
/** Compiled on first use, not at module load: a function that never checks an address pays nothing at its start. */
let compiled: ReturnType<typeof compile>[] | undefined;
const compiledRanges = () => (compiled ??= SPECIAL_RANGES.map(compile).sort((a, b) => b.prefix - a.prefix));

/** The first and last address of a range (for tests and messages). */
export function rangeBounds(range: SpecialRange): { first: bigint; last: bigint } {
  const { first, last } = compile(range);
  return { first, last };
}

/** `value` of `family` → its text (IPv4 dotted, IPv6 uncompressed groups). */
export function formatAddress(family: 4 | 6, value: bigint): string {
  if (family === 4) return [24n, 16n, 8n, 0n].map((s) => String((value >> s) & 0xffn)).join('.');
  return [112n, 96n, 80n, 64n, 48n, 32n, 16n, 0n].map((s) => ((value >> s) & 0xffffn).toString(16)).join(':');
}

/** The most specific special-purpose range holding `address` (an IP literal), or undefined for a public address or a name. */
export function specialRangeOf(address: string): SpecialRange | undefined {
  const parsed = parseAddress(address);
  if (!parsed) return undefined;
  return compiledRanges().find((c) => c.range.family === parsed.family && parsed.value >= c.first && parsed.value <= c.last)?.range;
}

// ---------------------------------------------------------------------------------------------------------------
// The decisions

/** Names that are never a public host: localhost (RFC 6761), mDNS `.local`, `.internal`, `.home.arpa`, single labels. */
function isNonPublicName(host: string): boolean {
  const name = host.toLowerCase().replace(/\.$/, '');
  if (!name.includes('.')) return true;
  return ['localhost', 'local', 'internal', 'home.arpa', 'invalid'].some((suffix) => name === suffix || name.endsWith(`.${suffix}`));
}

const isLoopbackName = (host: string) => /^(.+\.)?localhost$/i.test(host.replace(/\.$/, ''));

/** True for a loopback IP literal or a `localhost` name. */
export function isLoopbackHost(host: string): boolean {
  return isLoopbackName(host) || specialRangeOf(host)?.loopback === true;
}

/**
 * Why a resolved address may not be connected to, or undefined if it may. `allowLoopback` (the local stack with
 * ALLOW_INSECURE_WEBHOOKS) lets loopback through; every other special-purpose address is refused.
 */
export function addressProblem(address: string, allowLoopback: boolean): string | undefined {
  const range = specialRangeOf(address);
  if (!range || (allowLoopback && range.loopback)) return undefined;
  return `${range.cidr} (${range.name}) is not a public address`;
}

/**
 * Why the host of a URL (as `URL.hostname` gives it: IPv4 normalized, IPv6 in brackets) may not receive webhooks,
 * or undefined if it may. Names other than the non-public ones pass here; where they resolve to is checked when
 * delivering. `allowLoopback`: loopback literals and `localhost` names are allowed.
 */
export function hostProblem(host: string, allowLoopback: boolean): string | undefined {
  if (parseAddress(host)) return addressProblem(host, allowLoopback);
  if (allowLoopback && isLoopbackName(host)) return undefined;
  return isNonPublicName(host) ? `${host} is not a public host name` : undefined;
}

/**
 * The whole URL rule, at save and at delivery: absolute, no credentials, `https:` on a public host. With
 * `allowInsecure` (the local stack) loopback receivers are allowed too, and they alone may use `http:`.
 * Returns a short reason (without the URL), or undefined when the URL is acceptable.
 */
export function checkWebhookTarget(value: string, allowInsecure: boolean): WebhookTarget {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return { ok: false, reason: 'must be an absolute URL' };
  }
  if (url.username !== '' || url.password !== '') return { ok: false, reason: 'must not contain credentials' };
  const loopback = allowInsecure && isLoopbackHost(url.hostname);
  if (url.protocol !== 'https:' && !(loopback && url.protocol === 'http:')) {
    return { ok: false, reason: allowInsecure ? 'must use https (http only to a loopback receiver)' : 'must use https' };
  }
  const problem = hostProblem(url.hostname, allowInsecure);
  if (problem) return { ok: false, reason: `must point to a public host (${problem})` };
  return { ok: true, url };
}

export type WebhookTarget = { ok: true; url: URL } | { ok: false; reason: string };
