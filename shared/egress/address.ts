// Classifies one IP address as reachable by the scanner or not. Pure: no DNS, no I/O.
// Input must be a canonical literal (dotted-decimal IPv4, or IPv6 with or without brackets);
// anything else is refused as 'invalid' so that an unexpected form can never slip through.

export type AddressClass = { blocked: boolean; reason: string | null }

const ok: AddressClass = { blocked: false, reason: null }
const no = (reason: string): AddressClass => ({ blocked: true, reason })

/** Cloud metadata endpoints, named as such in reasons (they also sit in blocked ranges). */
const METADATA_V4 = new Set([
  0xa9fea9fe, // 169.254.169.254 (AWS, GCP, Azure, OpenStack, ...)
  0xa9feaa02, // 169.254.170.2 (AWS ECS task metadata)
  0x64646468, // 100.100.100.200 (Alibaba Cloud)
  0xc00000c0, // 192.0.0.192 (Oracle Cloud)
])

type V4Range = [base: number, prefix: number, reason: string]

// Order matters only for overlapping entries: the first match wins.
const V4_RANGES: V4Range[] = [
  [0x00000000, 8, 'unspecified'], // 0.0.0.0/8 "this network"
  [0x7f000000, 8, 'loopback'], // 127.0.0.0/8
  [0x0a000000, 8, 'private'], // 10.0.0.0/8
  [0xac100000, 12, 'private'], // 172.16.0.0/12
  [0xc0a80000, 16, 'private'], // 192.168.0.0/16
  [0x64400000, 10, 'cgnat'], // 100.64.0.0/10
  [0xa9fe0000, 16, 'link-local'], // 169.254.0.0/16
  [0xc0000000, 24, 'reserved'], // 192.0.0.0/24 IETF protocol assignments
  [0xc0000200, 24, 'documentation'], // 192.0.2.0/24 TEST-NET-1
  [0xc0586300, 24, 'reserved'], // 192.88.99.0/24 deprecated 6to4 relay anycast
  [0xc6120000, 15, 'reserved'], // 198.18.0.0/15 benchmarking
  [0xc6336400, 24, 'documentation'], // 198.51.100.0/24 TEST-NET-2
  [0xcb007100, 24, 'documentation'], // 203.0.113.0/24 TEST-NET-3
  [0xe0000000, 4, 'multicast'], // 224.0.0.0/4
  [0xffffffff, 32, 'broadcast'], // 255.255.255.255
  [0xf0000000, 4, 'reserved'], // 240.0.0.0/4
]

const inV4 = (ip: number, base: number, prefix: number) => prefix === 0 || ip >>> (32 - prefix) === base >>> (32 - prefix)

/** Strict dotted-decimal IPv4 (four parts, 0-255, no leading zeros) to an unsigned 32-bit number. */
export function parseIPv4(s: string): number | null {
  const parts = s.split('.')
  if (parts.length !== 4) return null
  let n = 0
  for (const p of parts) {
    if (!/^(0|[1-9][0-9]{0,2})$/.test(p)) return null
    const v = Number(p)
    if (v > 255) return null
    n = n * 256 + v
  }
  return n >>> 0
}

/** IPv6 literal (no brackets, no zone) to eight 16-bit groups; accepts an embedded dotted IPv4 tail. */
export function parseIPv6(s: string): number[] | null {
  if (s.length === 0 || s.length > 45 || !/^[0-9a-fA-F:.]+$/.test(s)) return null
  let tail: number[] = []
  let head = s
  const lastColon = s.lastIndexOf(':')
  if (s.includes('.')) {
    const v4 = parseIPv4(s.slice(lastColon + 1))
    if (v4 === null) return null
    tail = [v4 >>> 16, v4 & 0xffff]
    head = s.slice(0, lastColon + 1)
    // "::1.2.3.4" leaves "::" and "a::1.2.3.4" leaves "a::"; "a:b:...:1.2.3.4" leaves a trailing ':'.
    if (head.endsWith(':') && !head.endsWith('::')) head = head.slice(0, -1)
  }
  const halves = head.split('::')
  if (halves.length > 2) return null
  const group = (g: string) => (/^[0-9a-fA-F]{1,4}$/.test(g) ? parseInt(g, 16) : null)
  const side = (h: string | undefined): number[] | null => {
    if (!h) return []
    const out: number[] = []
    for (const g of h.split(':')) {
      const v = group(g)
      if (v === null) return null
      out.push(v)
    }
    return out
  }
  const left = side(halves[0])
  const right = side(halves[1])
  if (!left || !right) return null
  const want = 8 - tail.length
  if (halves.length === 2) {
    const fill = want - left.length - right.length
    if (fill < 1) return null
    return [...left, ...new Array<number>(fill).fill(0), ...right, ...tail]
  }
  if (left.length !== want) return null
  return [...left, ...tail]
}

function classifyV4(ip: number): AddressClass {
  if (METADATA_V4.has(ip)) return no('metadata')
  for (const [base, prefix, reason] of V4_RANGES) if (inV4(ip, base, prefix)) return no(reason)
  return ok
}

const v4Of = (hi: number, lo: number) => ((hi << 16) | lo) >>> 0

function classifyV6(g: number[]): AddressClass {
  const [a, b, c, d, e, f, h, i] = g as [number, number, number, number, number, number, number, number]
  const zero96 = a === 0 && b === 0 && c === 0 && d === 0 && e === 0
  if (zero96 && f === 0) {
    if (h === 0 && i === 0) return no('unspecified') // ::
    if (h === 0 && i === 1) return no('loopback') // ::1
    // IPv4-compatible ::a.b.c.d (deprecated): refused whatever it embeds.
    const inner = classifyV4(v4Of(h, i))
    return inner.blocked ? inner : no('reserved')
  }
  if (zero96 && f === 0xffff) return classifyV4(v4Of(h, i)) // IPv4-mapped ::ffff:a.b.c.d
  if (a === 0 && b === 0 && c === 0 && d === 0 && e === 0xffff && f === 0) {
    // ::ffff:0:a.b.c.d (SIIT IPv4-translated): refused whatever it embeds.
    const inner = classifyV4(v4Of(h, i))
    return inner.blocked ? inner : no('reserved')
  }
  if (a === 0x64 && b === 0xff9b && c === 0 && d === 0 && e === 0 && f === 0) {
    return classifyV4(v4Of(h, i)) // NAT64 64:ff9b::/96
  }
  if (a === 0x64 && b === 0xff9b && c === 1) return no('private') // 64:ff9b:1::/48 local-use NAT64
  if (a === 0xfd00 && b === 0x0ec2 && c === 0 && d === 0 && e === 0 && f === 0 && h === 0 && i === 0x254) {
    return no('metadata') // fd00:ec2::254 (AWS)
  }
  if ((a & 0xfe00) === 0xfc00) return no('private') // fc00::/7 unique local
  if ((a & 0xffc0) === 0xfe80) return no('link-local') // fe80::/10
  if ((a & 0xffc0) === 0xfec0) return no('private') // fec0::/10 deprecated site-local
  if ((a & 0xff00) === 0xff00) return no('multicast') // ff00::/8
  if (a === 0x2002) {
    const inner = classifyV4(v4Of(b, c)) // 6to4 2002:AABB:CCDD::/48
    return inner
  }
  if (a === 0x2001 && b === 0) return no('reserved') // Teredo 2001::/32
  if (a === 0x2001 && b === 0x0db8) return no('documentation') // 2001:db8::/32
  if (a === 0x3fff && (b & 0xf000) === 0) return no('documentation') // 3fff::/20
  if (a === 0x2001 && (b & 0xfff0) === 0x0010) return no('reserved') // 2001:10::/28 ORCHID
  if (a === 0x2001 && (b & 0xfff0) === 0x0020) return no('reserved') // 2001:20::/28 ORCHIDv2
  if (a === 0x2001 && b === 0x0002 && c === 0) return no('reserved') // 2001:2::/48 benchmarking
  // Everything outside global unicast 2000::/3 (discard-only 100::/64, unassigned space) is refused.
  if ((a & 0xe000) !== 0x2000) return no('reserved')
  return ok
}

/**
 * Whether the scanner may connect to `ip`. Accepts dotted-decimal IPv4 and IPv6 (brackets and a
 * %zone suffix are tolerated). Non-canonical or unparsable input is blocked with reason 'invalid'.
 * IPv4 embedded in IPv6 (mapped, compatible, NAT64, 6to4) is classified as the embedded address.
 */
export function classifyAddress(ip: string): AddressClass {
  let s = typeof ip === 'string' ? ip.trim() : ''
  if (s.startsWith('[') && s.endsWith(']')) s = s.slice(1, -1)
  const v4 = parseIPv4(s)
  if (v4 !== null) return classifyV4(v4)
  const pct = s.indexOf('%')
  if (pct > 0) s = s.slice(0, pct)
  const v6 = s.includes(':') ? parseIPv6(s) : null
  if (v6 !== null) return classifyV6(v6)
  return no('invalid')
}

/** 4 or 6 for a literal IP (brackets tolerated), 0 for anything else. */
export function ipFamily(s: string): 0 | 4 | 6 {
  let t = s
  if (t.startsWith('[') && t.endsWith(']')) t = t.slice(1, -1)
  if (parseIPv4(t) !== null) return 4
  const pct = t.indexOf('%')
  if (pct > 0) t = t.slice(0, pct)
  return t.includes(':') && parseIPv6(t) !== null ? 6 : 0
}
