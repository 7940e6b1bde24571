// The dashboard's only script, bundled for the browser (api/http/client-script.ts) and served inline with a
// CSP nonce. It polls the dashboard routes for scans still running and calls the settings actions with the
// session's anti-CSRF token (same origin only); a checkout button sends the browser on to the Stripe
// Checkout page its action created. A monitor's buttons pause, resume or remove it (a paused or resumed
// monitor is shown again as the server renders it).

// A module, so its names stay out of the page's global scope (the bundle wraps it in a function too).
export {}

const byId = (id: string) => document.getElementById(id)!
const csrf = document.querySelector<HTMLMetaElement>('meta[name="csrf-token"]')!.content

const post = (path: string) =>
  fetch(path, { method: 'POST', headers: { 'x-csrf-token': csrf }, credentials: 'same-origin' }).then(async (r) => {
    const body = await r.json().catch(() => ({}))
    if (!r.ok) throw new Error(body.message || String(r.status))
    return body
  })

const fail = (e: Error) => alert(e.message)

const showKey = (plaintext: string) => {
  byId('new-key-value').textContent = plaintext
  byId('new-key').hidden = false
}

/** A click handler on every element the selector finds. */
const on = (sel: string, fn: (el: HTMLElement) => void) =>
  document.querySelectorAll<HTMLElement>(sel).forEach((el) => {
    el.addEventListener('click', () => fn(el))
  })

/** The button disabled while its action runs, enabled again if it fails. */
const busy = (el: HTMLElement, action: Promise<unknown>) => {
  ;(el as HTMLButtonElement).disabled = true
  action.catch((e) => {
    ;(el as HTMLButtonElement).disabled = false
    fail(e)
  })
}

on('#create-key', () =>
  post('/dashboard/api/keys')
    .then((k) => showKey(k.plaintext))
    .catch(fail),
)
on('.regenerate', (el) => {
  if (!confirm('Regenerate this key? The old one stops working at once.')) return
  post(`/dashboard/api/keys/${el.dataset.key}/regenerate`)
    .then((k) => {
      el.closest('tr')?.remove()
      showKey(k.plaintext)
      // The local key: also written where the next start reads it.
      if (k.savedTo) byId('copied').textContent = `Also saved in ${k.savedTo} for the next start.`
    })
    .catch(fail)
})
on('.revoke-key', (el) => {
  if (!confirm('Revoke this key? It stops working at once.')) return
  post(`/dashboard/api/keys/${el.dataset.key}/revoke`)
    .then(() => el.closest('tr')?.remove())
    .catch(fail)
})
on('.revoke-agent', (el) => {
  if (!confirm('Revoke this agent? Its token stops working at once.')) return
  post(`/dashboard/api/agents/${el.dataset.agent}/revoke`)
    .then(() => el.closest('tr')?.remove())
    .catch(fail)
})
on('.monitor-toggle', (el) =>
  busy(
    el,
    post(`/dashboard/api/monitors/${el.dataset.monitor}/${el.dataset.verb}`).then(() => location.reload()),
  ),
)
on('.monitor-remove', (el) => {
  if (!confirm('Remove this monitor? Its run history is deleted; the scans stay.')) return
  post(`/dashboard/api/monitors/${el.dataset.monitor}/remove`)
    .then(() => el.closest('.monitor')?.remove())
    .catch(fail)
})
on('.checkout', (el) =>
  busy(
    el,
    post(`/dashboard/api/billing/checkout/${el.dataset.kind}`).then((c) => location.assign(c.url)),
  ),
)
on('#copy-key', () =>
  navigator.clipboard.writeText(byId('new-key-value').textContent ?? '').then(
    () => {
      byId('copied').textContent = 'Copied'
    },
    () => {
      byId('copied').textContent = 'Select and copy it by hand'
    },
  ),
)

interface Polled {
  status: string
  progress?: { pagesScanned: number; pagesDiscovered: number }
  report?: { score?: unknown; grade?: string }
  result?: { score?: unknown; grade?: string }
  score?: unknown
  grade?: string
}

const setText = (tr: HTMLElement, sel: string, text: string) => {
  const cell = tr.querySelector(sel)
  if (cell) cell.textContent = text
}

/** Every row of a scan or an audit still queued or running, refreshed every two seconds until none is. */
const poll = () => {
  const live = [...document.querySelectorAll<HTMLTableRowElement>('tr[data-scan], tr[data-audit]')].filter(
    (tr) => tr.dataset.status === 'queued' || tr.dataset.status === 'running',
  )
  if (!live.length) return
  Promise.all(
    live.map((tr) => {
      const path = tr.dataset.scan ? `/api/scans/${tr.dataset.scan}` : `/api/audits/${tr.dataset.audit}`
      return fetch(path, { credentials: 'same-origin' })
        .then((r) => (r.ok ? (r.json() as Promise<Polled>) : null))
        .then((s) => {
          if (!s) return
          tr.dataset.status = s.status
          setText(tr, '.status', s.status)
          const r = s.report || s.result || s
          if (r && typeof r.score === 'number') setText(tr, '.score', `${r.score} ${r.grade}`)
          if (s.progress) setText(tr, '.pages', `${s.progress.pagesScanned} of ${s.progress.pagesDiscovered}`)
        })
        .catch(() => {})
    }),
  ).finally(() => setTimeout(poll, 2000))
}
setTimeout(poll, 2000)
