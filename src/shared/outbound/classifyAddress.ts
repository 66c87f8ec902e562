/**
 * Which kind of network an IP address belongs to, for the outbound guard: only `public` addresses
 * may be dialled by default; `--allow-private-network` adds `loopback` and `private`. Ranges from
 * the IANA special-purpose registries (RFC 6890 and its updates).
 */
import { BlockList, isIP } from 'node:net';

export type AddressClass =
  'public' | 'loopback' | 'private' | 'link-local' | 'unspecified' | 'multicast' | 'reserved';

type Range = readonly [prefix: string, bits: number, cls: Exclude<AddressClass, 'public'>];

const V4: readonly Range[] = [
  ['0.0.0.0', 8, 'unspecified'], // RFC 1122 "this network"
  ['10.0.0.0', 8, 'private'], // RFC 1918
  ['100.64.0.0', 10, 'private'], // RFC 6598 carrier-grade NAT
  ['127.0.0.0', 8, 'loopback'],
  ['169.254.0.0', 16, 'link-local'], // RFC 3927; cloud metadata lives here
  ['172.16.0.0', 12, 'private'], // RFC 1918
  ['192.0.0.0', 24, 'reserved'], // RFC 6890 IETF protocol assignments
  ['192.0.2.0', 24, 'reserved'], // RFC 5737 TEST-NET-1
  ['192.88.99.0', 24, 'reserved'], // RFC 7526 6to4 relay anycast
  ['192.168.0.0', 16, 'private'], // RFC 1918
  ['198.18.0.0', 15, 'reserved'], // RFC 2544 benchmarking
  ['198.51.100.0', 24, 'reserved'], // RFC 5737 TEST-NET-2
  ['203.0.113.0', 24, 'reserved'], // RFC 5737 TEST-NET-3
  ['224.0.0.0', 4, 'multicast'],
  ['240.0.0.0', 4, 'reserved'], // RFC 1112, includes 255.255.255.255
];

const V6: readonly Range[] = [
  ['::', 128, 'unspecified'],
  ['::1', 128, 'loopback'],
  ['100::', 64, 'reserved'], // RFC 6666 discard
  ['2001::', 23, 'reserved'], // RFC 2928 IETF protocol assignments (Teredo, ORCHID, …)
  ['2001:db8::', 32, 'reserved'], // RFC 3849 documentation
  ['fc00::', 7, 'private'], // RFC 4193 unique local
  ['fe80::', 10, 'link-local'],
  ['fec0::', 10, 'private'], // RFC 3879 deprecated site-local
  ['ff00::', 8, 'multicast'],
];

const lists = new Map<Exclude<AddressClass, 'public'>, BlockList>();
for (const [prefix, bits, cls] of [...V4, ...V6]) {
  let list = lists.get(cls);
  if (list === undefined) lists.set(cls, (list = new BlockList()));
  list.addSubnet(prefix, bits, isIP(prefix) === 6 ? 'ipv6' : 'ipv4');
}

/** The IPv4 address an IPv6 address carries (IPv4-mapped, IPv4-compatible, NAT64, 6to4), if any. */
function embeddedIpv4(words: readonly number[]): string | undefined {
  const v4 = (hi: number, lo: number) => `${hi >> 8}.${hi & 0xff}.${lo >> 8}.${lo & 0xff}`;
  const [w0, w1, w2, w3, w4, w5, w6, w7] = words as [
    number,
    number,
    number,
    number,
    number,
    number,
    number,
    number,
  ];
  // ::ffff:a.b.c.d (RFC 4291 mapped) and ::a.b.c.d (deprecated compatible)
  if (w0 === 0 && w1 === 0 && w2 === 0 && w3 === 0 && w4 === 0 && (w5 === 0xffff || w5 === 0))
    return v4(w6, w7);
  // 64:ff9b::a.b.c.d (RFC 6052 NAT64) and 64:ff9b:1::/48 (RFC 8215)
  if (w0 === 0x64 && w1 === 0xff9b) return v4(w6, w7);
  // 2002:aabb:ccdd::/48 (RFC 3056 6to4)
  if (w0 === 0x2002) return v4(w1, w2);
  return undefined;
}

/** Expands an IPv6 literal into its eight 16-bit words. */
function ipv6Words(address: string): number[] {
  let text = address;
  const lastColon = text.lastIndexOf(':');
  const tail = text.slice(lastColon + 1);
  let tailWords: number[] = [];
  if (tail.includes('.')) {
    const [a, b, c, d] = tail.split('.').map(Number) as [number, number, number, number];
    tailWords = [(a << 8) | b, (c << 8) | d];
    text = text.slice(0, lastColon + 1) + '0';
  }
  const [head, rest] = text.split('::') as [string, string | undefined];
  const parse = (s: string) => (s === '' ? [] : s.split(':').map((h) => parseInt(h, 16)));
  const left = parse(head);
  const right = rest === undefined ? [] : parse(rest);
  if (tailWords.length > 0) (right.length > 0 ? right : left).pop();
  const fill = 8 - left.length - right.length - tailWords.length;
  return [...left, ...new Array<number>(Math.max(0, fill)).fill(0), ...right, ...tailWords];
}

/** Classifies an IP literal; anything that is not an IP address is an error of the caller. */
export function classifyAddress(address: string): AddressClass {
  const unbracketed = address.startsWith('[') && address.endsWith(']') ? address.slice(1, -1) : address;
  const bare = unbracketed.split('%')[0] ?? unbracketed; // drop an IPv6 zone id
  const family = isIP(bare);
  if (family === 0) throw new TypeError(`not an IP address: ${address}`);
  const type = family === 6 ? 'ipv6' : 'ipv4';
  for (const [cls, list] of lists) if (list.check(bare, type)) return cls;
  if (family === 6) {
    const inner = embeddedIpv4(ipv6Words(bare));
    // An IPv6 address carrying an IPv4 one reaches what that one reaches.
    if (inner !== undefined) return classifyAddress(inner);
  }
  return 'public';
}
