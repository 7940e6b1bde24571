// The dashboard's only script, served inline with a CSP nonce. It polls the dashboard routes for scans
// still running and calls the settings actions with the session's anti-CSRF token (same origin only); a
// checkout button sends the browser on to the Stripe Checkout page its action created. A monitor's buttons
// pause, resume or remove it (a paused or resumed monitor is shown again as the server renders it).
export const DASHBOARD_SCRIPT = `(() => {
const csrf = document.querySelector('meta[name="csrf-token"]').content;
const post = (path) => fetch(path, { method: 'POST', headers: { 'x-csrf-token': csrf }, credentials: 'same-origin' })
  .then(async (r) => { const body = await r.json().catch(() => ({})); if (!r.ok) throw new Error(body.message || r.status); return body; });
const showKey = (plaintext) => {
  document.getElementById('new-key-value').textContent = plaintext;
  document.getElementById('new-key').hidden = false;
};
const on = (sel, fn) => document.querySelectorAll(sel).forEach((el) => el.addEventListener('click', () => fn(el)));
on('#create-key', () => post('/dashboard/api/keys').then((k) => { showKey(k.plaintext); }).catch((e) => alert(e.message)));
on('.regenerate', (el) => { if (confirm('Regenerate this key? The old one stops working at once.'))
  post('/dashboard/api/keys/' + el.dataset.key + '/regenerate').then((k) => { el.closest('tr').remove(); showKey(k.plaintext);
    // The local key: also written where the next start reads it.
    if (k.savedTo) document.getElementById('copied').textContent = 'Also saved in ' + k.savedTo + ' for the next start.'; }).catch((e) => alert(e.message)); });
on('.revoke-key', (el) => { if (confirm('Revoke this key? It stops working at once.'))
  post('/dashboard/api/keys/' + el.dataset.key + '/revoke').then(() => el.closest('tr').remove()).catch((e) => alert(e.message)); });
on('.revoke-agent', (el) => { if (confirm('Revoke this agent? Its token stops working at once.'))
  post('/dashboard/api/agents/' + el.dataset.agent + '/revoke').then(() => el.closest('tr').remove()).catch((e) => alert(e.message)); });
on('.monitor-toggle', (el) => { el.disabled = true;
  post('/dashboard/api/monitors/' + el.dataset.monitor + '/' + el.dataset.verb).then(() => location.reload()).catch((e) => { el.disabled = false; alert(e.message); }); });
on('.monitor-remove', (el) => { if (confirm('Remove this monitor? Its run history is deleted; the scans stay.'))
  post('/dashboard/api/monitors/' + el.dataset.monitor + '/remove').then(() => el.closest('.monitor').remove()).catch((e) => alert(e.message)); });
on('.checkout', (el) => { el.disabled = true;
  post('/dashboard/api/billing/checkout/' + el.dataset.kind).then((c) => { location.assign(c.url); }).catch((e) => { el.disabled = false; alert(e.message); }); });
on('#copy-key', () => navigator.clipboard.writeText(document.getElementById('new-key-value').textContent)
  .then(() => { document.getElementById('copied').textContent = 'Copied'; }, () => { document.getElementById('copied').textContent = 'Select and copy it by hand'; }));
const poll = () => {
  const live = [...document.querySelectorAll('tr[data-scan], tr[data-audit]')].filter((tr) => tr.dataset.status === 'queued' || tr.dataset.status === 'running');
  if (!live.length) return;
  Promise.all(live.map((tr) => {
    const path = tr.dataset.scan ? '/api/scans/' + tr.dataset.scan : '/api/audits/' + tr.dataset.audit;
    return fetch(path, { credentials: 'same-origin' }).then((r) => r.ok ? r.json() : null).then((s) => {
      if (!s) return;
      tr.dataset.status = s.status;
      tr.querySelector('.status').textContent = s.status;
      const r = s.report || s.result || s;
      if (r && typeof r.score === 'number' && tr.querySelector('.score')) tr.querySelector('.score').textContent = r.score + ' ' + r.grade;
      if (s.progress) tr.querySelector('.pages').textContent = s.progress.pagesScanned + ' of ' + s.progress.pagesDiscovered;
    }).catch(() => {});
  })).finally(() => setTimeout(poll, 2000));
};
setTimeout(poll, 2000);
})();`
