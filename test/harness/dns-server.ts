// A tiny authoritative DNS server for tests: answers TXT, A and AAAA queries over UDP on 127.0.0.1
// from an in-memory table (RFC 1035 wire format). Names it does not hold get NXDOMAIN; other record
// types of a name it holds get an empty NOERROR answer. Enough for node:dns Resolver#resolveTxt,
// #resolve4 and #resolve6.
import { createSocket, type RemoteInfo } from 'node:dgram'
import { isIPv4, isIPv6 } from 'node:net'
import { parseIPv6 } from '../../shared/egress/address.ts'

export interface DnsServer {
  /** "127.0.0.1:PORT", ready for Resolver#setServers. */
  address: string
  port: number
  /** Replaces the TXT records of a name (each string becomes one record). */
  setTxt(name: string, values: string[]): void
  /** Replaces the A and AAAA records of a name (IPv4 and IPv6 literals, sorted by family). */
  setAddresses(name: string, addresses: string[]): void
  clear(name: string): void
  /** Every question received, "name TYPE", in arrival order (bounded). */
  queries: string[]
  stop(): Promise<void>
}

const TYPE_TXT = 16
const TYPE_A = 1
const TYPE_AAAA = 28
const TYPE_NAMES: Record<number, string> = { 1: 'A', 28: 'AAAA', 16: 'TXT', 5: 'CNAME', 15: 'MX', 2: 'NS', 6: 'SOA', 41: 'OPT' }
const MAX_QUERIES_KEPT = 1_000

const norm = (name: string) => name.toLowerCase().replace(/\.+$/, '')

/** Reads an uncompressed QNAME (queries never compress). Returns the name and the offset after it. */
function readName(msg: Buffer, offset: number): { name: string; end: number } | null {
  const labels: string[] = []
  let i = offset
  for (let n = 0; n < 128; n++) {
    if (i >= msg.length) return null
    const len = msg[i]!
    if (len === 0) return { name: labels.join('.'), end: i + 1 }
    if (len > 63 || i + 1 + len > msg.length) return null
    labels.push(msg.subarray(i + 1, i + 1 + len).toString('latin1'))
    i += 1 + len
  }
  return null
}

/** TXT RDATA: one or more <length><bytes> strings of at most 255 bytes each. */
function txtRdata(value: string): Buffer {
  const bytes = Buffer.from(value, 'utf8')
  const parts: Buffer[] = []
  for (let i = 0; i < bytes.length || parts.length === 0; i += 255) {
    const chunk = bytes.subarray(i, i + 255)
    parts.push(Buffer.from([chunk.length]), chunk)
  }
  return Buffer.concat(parts)
}

function addressRdata(ip: string): Buffer {
  if (isIPv4(ip)) return Buffer.from(ip.split('.').map(Number))
  const groups = parseIPv6(ip)!
  const b = Buffer.alloc(16)
  for (const [i, g] of groups.entries()) b.writeUInt16BE(g, i * 2)
  return b
}

function answer(
  query: Buffer,
  records: Map<string, string[]>,
  addresses: Map<string, string[]>,
): { reply: Buffer; question: string } | null {
  if (query.length < 12) return null
  const id = query.readUInt16BE(0)
  const flags = query.readUInt16BE(2)
  if (flags & 0x8000) return null // a response, not a query
  const qdcount = query.readUInt16BE(4)
  const opcode = (flags >> 11) & 0xf
  const rd = flags & 0x0100
  const header = (rcode: number, ancount: number, qd: number) => {
    const h = Buffer.alloc(12)
    h.writeUInt16BE(id, 0)
    h.writeUInt16BE(0x8000 | (opcode << 11) | 0x0400 | rd | 0x0080 | rcode, 2) // QR, AA, RD copied, RA
    h.writeUInt16BE(qd, 4)
    h.writeUInt16BE(ancount, 6)
    return h
  }
  if (qdcount !== 1 || opcode !== 0) return { reply: header(4, 0, 0), question: '(unsupported)' } // NOTIMP
  const q = readName(query, 12)
  if (!q || q.end + 4 > query.length) return { reply: header(1, 0, 0), question: '(malformed)' } // FORMERR
  const qtype = query.readUInt16BE(q.end)
  const question = query.subarray(12, q.end + 4)
  const label = `${q.name} ${TYPE_NAMES[qtype] ?? qtype}`
  const values = records.get(norm(q.name))
  const ips = addresses.get(norm(q.name))
  if (!values && !ips) return { reply: Buffer.concat([header(3, 0, 1), question]), question: label } // NXDOMAIN
  const rdatas =
    qtype === TYPE_TXT
      ? (values ?? []).map(txtRdata)
      : qtype === TYPE_A
        ? (ips ?? []).filter((ip) => isIPv4(ip)).map(addressRdata)
        : qtype === TYPE_AAAA
          ? (ips ?? []).filter((ip) => isIPv6(ip)).map(addressRdata)
          : []
  const answers = rdatas.map((rdata) => {
    const rr = Buffer.alloc(12)
    rr.writeUInt16BE(0xc00c, 0) // pointer to the question's name
    rr.writeUInt16BE(qtype, 2)
    rr.writeUInt16BE(1, 4) // IN
    rr.writeUInt32BE(60, 6) // TTL
    rr.writeUInt16BE(rdata.length, 10)
    return Buffer.concat([rr, rdata])
  })
  return { reply: Buffer.concat([header(0, answers.length, 1), question, ...answers]), question: label }
}

export async function startDnsServer(): Promise<DnsServer> {
  const records = new Map<string, string[]>()
  const addresses = new Map<string, string[]>()
  const queries: string[] = []
  const socket = createSocket('udp4')
  socket.on('message', (msg: Buffer, rinfo: RemoteInfo) => {
    const r = answer(msg, records, addresses)
    if (!r) return
    queries.push(r.question)
    if (queries.length > MAX_QUERIES_KEPT) queries.splice(0, queries.length - MAX_QUERIES_KEPT)
    socket.send(r.reply, rinfo.port, rinfo.address)
  })
  await new Promise<void>((resolve, reject) => {
    socket.once('error', reject)
    socket.bind(0, '127.0.0.1', () => {
      socket.off('error', reject)
      resolve()
    })
  })
  const port = socket.address().port
  let stopped: Promise<void> | null = null
  return {
    address: `127.0.0.1:${port}`,
    port,
    queries,
    setTxt: (name, values) => void records.set(norm(name), [...values]),
    setAddresses: (name, ips) => void addresses.set(norm(name), [...ips]),
    clear: (name) => {
      records.delete(norm(name))
      addresses.delete(norm(name))
    },
    stop: () => (stopped ??= new Promise<void>((resolve) => socket.close(() => resolve()))),
  }
}
