// Vercel: the headers as a rule for every path in vercel.json, merged into an existing rule for /(.*).
import type { Header, Plan, Wanted } from '../plan.ts'

export function vercel(p: Plan, w: Wanted): void {
  const path = 'vercel.json'
  if (w.headers.length) {
    const before = p.current(path)
    let doc: Record<string, unknown> = {}
    let ok = true
    if (before !== null) {
      try {
        const parsed = JSON.parse(before)
        if (parsed && typeof parsed === 'object' && !Array.isArray(parsed)) doc = parsed
        else ok = false
      } catch {
        ok = false
      }
    }
    if (!ok) {
      for (const { f } of w.headerFixes) p.cannot(f, 'vercel.json is not a JSON object, so it cannot be edited safely: fix it first.')
    } else {
      const rules = Array.isArray(doc.headers) ? [...(doc.headers as unknown[])] : []
      const idx = rules.findIndex(
        (r) => (r as { source?: unknown })?.source === '/(.*)' && Array.isArray((r as { headers?: unknown }).headers),
      )
      if (idx >= 0) {
        const rule = rules[idx] as { source: string; headers: Header[] }
        const kept = rule.headers.filter((x) => !w.headers.some((h) => h.key.toLowerCase() === String(x?.key).toLowerCase()))
        rules[idx] = { ...rule, headers: [...kept, ...w.headers] }
      } else rules.push({ source: '/(.*)', headers: w.headers })
      doc.headers = rules
      p.write(path, `${JSON.stringify(doc, null, 2)}\n`)
      p.fixHeaders(w, 'vercel.json headers, every path')
    }
  }
  if (w.redirect)
    p.cannot(
      w.redirect,
      'Vercel redirects http to https itself on its domains; for a custom domain, check it is added in the project settings.',
    )
  if (w.version)
    p.cannot(
      w.version,
      'Vercel sets its own Server header; an X-Powered-By: Next.js header goes away with poweredByHeader: false in next.config.js.',
    )
  p.cookiesInCode(w, 'Cookies on Vercel are set by the application code (res.cookie / cookies().set): add the attribute there.')
}
