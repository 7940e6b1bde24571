// Holds ports on 127.0.0.1 for apps.sh, whose servers (apache2, nginx) are given their ports in their
// configuration: each a socket listening on port 0 with SO_REUSEPORT (test/harness/ports.ts, reservedPort),
// which the kernel refuses to every other process's bind without that option, while apache2
// (`ListenCoresBucketsRatio`) and nginx (`listen ... reuseport`) bind beside it. Prints the ports on one line,
// then keeps them until SIGTERM or SIGINT (apps.sh sends it once its servers listen), or for at most
// --hold-s seconds.
//
//   bun bench/real-apps/hold-ports.ts N [--hold-s=120]
import { type ReservedPort, reservedPort } from '../../test/harness/ports.ts'
import { intFlag } from '../lib/stats.ts'

const count = Number.parseInt(process.argv[2] ?? '', 10)
if (!Number.isInteger(count) || count < 1 || count > 32) {
  console.error('usage: bun bench/real-apps/hold-ports.ts N (1-32) [--hold-s=S]')
  process.exit(2)
}
const holdMs = intFlag('hold-s', 120, 1, 600) * 1000
const holds: ReservedPort[] = []
for (let i = 0; i < count; i++) holds.push(await reservedPort())
process.stdout.write(`${holds.map((h) => h.port).join(' ')}\n`)

let done = false
const release = async () => {
  if (done) return
  done = true
  await Promise.all(holds.map((h) => h.release()))
  process.exit(0)
}
process.on('SIGTERM', release)
process.on('SIGINT', release)
setTimeout(release, holdMs)
