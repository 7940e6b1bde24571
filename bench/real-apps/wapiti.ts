// Wapiti (Debian's /usr/bin/wapiti) as the peer: one bounded run per application, JSON report, read back as a
// flat list of findings (category, level, path, info).
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

export const WAPITI = process.env.WAPITI_BIN ?? '/usr/bin/wapiti'
/** Where bench/real-apps/wapiti-db.sh puts the Nikto and Wappalyzer databases. */
export const WAPITI_CONFIG = process.env.WAPITI_CONFIG ?? '/var/lib/appaudit-realapps/wapiti-config'
/**
 * Its default ("common") attack modules plus those that look for exposed files and server information
 * without injecting anything: backup files, Nikto's database, HTTP methods, technology fingerprints (wapp),
 * .htaccess bypass.
 */
export const WAPITI_MODULES = 'common,backup,nikto,methods,wapp,htaccess'

export interface WapitiFinding {
  kind: 'vulnerability' | 'anomaly' | 'additional'
  category: string
  level: number
  path: string
  info: string
}

export interface WapitiRun {
  ms: number
  findings: WapitiFinding[]
  error: string | null
  /** Stopped past its time limit (Ctrl-C, "r"): the report holds what it had found by then. */
  interrupted: boolean
  /** Wapiti's own log, last lines (why a module did nothing, e.g. Nikto's database not downloadable). */
  tail: string
}

export async function wapitiVersion(): Promise<string> {
  const p = Bun.spawn([WAPITI, '--version'], { stdout: 'pipe', stderr: 'pipe' })
  const out = (await new Response(p.stdout).text()) + (await new Response(p.stderr).text())
  await p.exited
  return /Wapiti[- ]?(\d[\w.]*)/i.exec(out)?.[1] ?? 'unknown'
}

/**
 * Runs Wapiti on one URL, bounded by maxScanS (its own limit, which 3.0.4 does not always honour in its
 * attack phase): 60 s past it Wapiti is interrupted the way a person would, Ctrl-C then "r" (stop and write
 * the report of what it found so far); killed 120 s after that.
 */
export async function runWapiti(url: string, maxScanS: number, maxAttackS: number): Promise<WapitiRun> {
  const dir = mkdtempSync(join(tmpdir(), 'appaudit-wapiti-'))
  const out = join(dir, 'report.json')
  const args = [WAPITI, '-u', url, '--scope', 'folder', '-m', WAPITI_MODULES, '--max-scan-time', String(maxScanS)]
  args.push('--max-attack-time', String(maxAttackS), '-d', '3', '--max-links-per-page', '50', '--flush-session')
  args.push('--store-session', dir, '-f', 'json', '-o', out, '-v', '1')
  if (existsSync(join(WAPITI_CONFIG, 'nikto_db'))) args.push('--store-config', WAPITI_CONFIG)
  const t0 = performance.now()
  const p = Bun.spawn(args, { stdin: 'pipe', stdout: 'pipe', stderr: 'pipe', cwd: dir })
  let interrupted = false
  const interrupt = setTimeout(
    () => {
      interrupted = true
      p.kill('SIGINT')
      setTimeout(() => {
        p.stdin.write('r\n')
        p.stdin.flush()
      }, 2_000)
    },
    (maxScanS + 60) * 1000,
  )
  const killer = setTimeout(() => p.kill('SIGKILL'), (maxScanS + 180) * 1000)
  const [stdout, stderr] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text()])
  const code = await p.exited
  clearTimeout(interrupt)
  clearTimeout(killer)
  const ms = performance.now() - t0
  const tail = (stdout + stderr)
    .split('\n')
    .filter((l) => l.trim() && !/^\[\+\] (GET|POST)/.test(l))
    .slice(-12)
    .join('\n')
  try {
    const findings = readReport(JSON.parse(readFileSync(out, 'utf8')))
    return { ms, findings, error: null, interrupted, tail }
  } catch (e) {
    return { ms, findings: [], error: `wapiti exited ${code}, no report: ${(e as Error).message}`, interrupted, tail }
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

type Section = Record<string, { path?: string; info?: string; level?: number }[]>

function readReport(json: Record<string, unknown>): WapitiFinding[] {
  const found: WapitiFinding[] = []
  const sections: [WapitiFinding['kind'], unknown][] = [
    ['vulnerability', json.vulnerabilities],
    ['anomaly', json.anomalies],
    ['additional', json.additionals],
  ]
  for (const [kind, section] of sections) {
    for (const [category, list] of Object.entries((section ?? {}) as Section)) {
      for (const f of list ?? []) found.push({ kind, category, level: f.level ?? 0, path: f.path ?? '', info: f.info ?? '' })
    }
  }
  return found
}
