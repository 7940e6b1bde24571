// The owner's report page script, bundled for the browser (api/http/client-script.ts): while the report
// runs it polls the dashboard route the #live section names, shows the progress, and reloads the page when
// the run has ended (every two seconds, for two hours at most).

// A module, so its names stay out of the page's global scope (the bundle wraps it in a function too).
export {}

const live = document.getElementById('live')
if (live) {
  const set = (sel: string, text: unknown) => {
    const el = live.querySelector(sel)
    if (el) el.textContent = String(text)
  }
  interface Polled {
    status: string
    progress?: { pagesScanned: number; pagesDiscovered: number; currentUrl?: string | null }
  }
  let n = 0
  const tick = () =>
    fetch(live.dataset.poll ?? '', { credentials: 'same-origin' })
      .then((r) => (r.ok ? (r.json() as Promise<Polled>) : null))
      .then((s) => {
        if (!s) return false
        set('.status', s.status)
        if (s.progress) {
          set('.pages-scanned', s.progress.pagesScanned)
          set('.pages-discovered', s.progress.pagesDiscovered)
          set('.current-url', s.progress.currentUrl || '')
        }
        if (s.status === 'completed' || s.status === 'failed' || s.status === 'cancelled') {
          location.reload()
          return true
        }
        return false
      })
      .catch(() => false)
      .then((done) => {
        if (!done && ++n < 3600) setTimeout(tick, 2000)
      })
  setTimeout(tick, 1500)
}
