// The live viewer's script, bundled for the browser (api/http/client-script.ts) and allowed by its hash.
// It reads the token from the URL fragment, which browsers never send to a server, and hands it over as the
// socket's first message. Everything the server sends is JSON text. The client sends the token once, then
// only which lane to follow (focus:N, focus:auto): the crawl's pages are never touched.
//
// Before the first frame a placeholder says what the crawl is doing (the picture stays hidden until it has
// one). A frame is decoded off screen into a bitmap (createImageBitmap) and then handed whole to the
// picture, a canvas, so it never shows half a frame, and frames that arrive while one is decoding are
// skipped for the newest: the frame counter and the rate count frames painted, not received. A canvas that
// takes the bitmap over (its `bitmaprenderer` context) costs the viewer's browser less CPU a frame than an
// <img> given a data: URL, which it decoded and then drew into its tiles again (docs/decisions.md, "The
// viewer page"). The state reads "crawling" from the first frame on, whatever a late progress message says. The end card shows the audit's score and final counts.
import { CLOSE_ENDED, CLOSE_POLICY } from '../../shared/protocol/viewer-close.ts'

const $ = (id: string) => document.getElementById(id)!

const STATES: Record<string, string> = {
  waiting: 'waiting for the first page',
  crawling: 'crawling',
  completed: 'finished',
  failed: 'failed',
  cancelled: 'cancelled',
  reconnecting: 'reconnecting',
}

/** What the socket sends: the latest frame of a lane, or the audit's progress. */
type Message =
  | { type: 'ready' }
  | { type: 'frame'; data: unknown; url?: string; lanes?: unknown; lane?: unknown }
  | {
      type: 'progress'
      state: string
      pagesScanned: number
      pagesFailed: number
      pagesDiscovered: number
      currentUrl?: string | null
      findings?: Record<string, number>
      startedAt?: string | null
      lanes?: unknown
      score?: unknown
    }

let token = ''
try {
  token = decodeURIComponent(location.hash.slice(1))
} catch {
  // A mangled link: not valid.
}
let shown = 0
let state = ''
/** The newest frame not yet painted, and whether one is being decoded. */
let pending: { data: string; url?: string; lane?: unknown } | null = null
let decoding = false
let started = 0
let lanes = 0
let following = 'auto'
const stamps: number[] = []
let ws: WebSocket | null = null

/** Hides the live view and shows one of the notices (ended, invalid, lost). */
function notice(kind: string) {
  $('live').hidden = true
  $(kind).hidden = false
  document.title = $(kind).querySelector('h1')?.textContent ?? document.title
}

function setState(s: string) {
  // A page on screen is a page being crawled, whatever an older progress message says.
  const next = s === 'waiting' && shown > 0 ? 'crawling' : s
  state = next
  $('state').textContent = STATES[next] || next
  $('state').className = next
  $('placeholder-state').textContent = STATES[next] || next
}

function elapsed() {
  if (!started) return
  const s = Math.max(0, Math.round((Date.now() - started) / 1000))
  $('elapsed').textContent = `${Math.floor(s / 60)}:${`0${s % 60}`.slice(-2)}`
}

/** Frames shown over the last two seconds. */
function fps() {
  const now = Date.now()
  while (stamps.length && now - stamps[0]! > 2000) stamps.shift()
  $('fps').textContent = (stamps.length / 2).toFixed(1)
}

/** One button a lane (and "latest page") once there are two lanes or more; pressing one follows that lane. */
function laneButtons(n: number) {
  if (n === lanes) return
  lanes = n
  const box = $('lanes')
  while (box.firstChild) box.removeChild(box.firstChild)
  if (n < 2) return
  const choices = ['auto']
  for (let i = 0; i < n; i++) choices.push(String(i))
  for (const c of choices) {
    const b = document.createElement('button')
    b.type = 'button'
    b.textContent = c === 'auto' ? 'latest page' : `lane ${Number(c) + 1}`
    b.setAttribute('aria-pressed', String(c === following))
    b.onclick = () => {
      following = c
      if (ws?.readyState === 1) ws.send(`focus:${c}`)
      for (const x of box.children) x.setAttribute('aria-pressed', String(x === b))
    }
    box.appendChild(b)
  }
}

/** The picture, and how a frame reaches it: taken over whole, or drawn where a browser lacks that context. */
const picture = $('screen') as HTMLCanvasElement
const takes = picture.getContext('bitmaprenderer')
const draws = takes ? null : picture.getContext('2d')

/** A frame's JPEG bytes from its base64 text (the socket sends JSON). */
function bytesOf(base64: string): Uint8Array<ArrayBuffer> {
  const native = (Uint8Array as unknown as { fromBase64?: (s: string) => Uint8Array<ArrayBuffer> }).fromBase64
  if (native) return native.call(Uint8Array, base64)
  const text = atob(base64)
  const out = new Uint8Array(text.length)
  for (let i = 0; i < text.length; i++) out[i] = text.charCodeAt(i)
  return out
}

/** The frame decoded into a bitmap, or null when its bytes are not a picture. */
async function decoded(base64: string): Promise<ImageBitmap | null> {
  try {
    return await createImageBitmap(new Blob([bytesOf(base64)], { type: 'image/jpeg' }))
  } catch {
    return null
  }
}

/** Decodes the newest pending frame off screen, then shows it; repeats while newer ones came meanwhile. */
async function paint() {
  if (decoding) return
  decoding = true
  try {
    for (let i = 0; pending && i < 1_000_000; i++) {
      const m = pending
      pending = null
      const bitmap = await decoded(m.data)
      if (!bitmap) continue
      if (picture.width !== bitmap.width || picture.height !== bitmap.height) {
        picture.width = bitmap.width
        picture.height = bitmap.height
      }
      if (takes) takes.transferFromImageBitmap(bitmap)
      else {
        draws?.drawImage(bitmap, 0, 0)
        bitmap.close()
      }
      picture.hidden = false
      $('placeholder').hidden = true
      shown++
      picture.dataset.frame = String(shown)
      stamps.push(Date.now())
      $('frames').textContent = String(shown)
      if (state === 'waiting' || state === '') setState('crawling')
      if (m.url) $('url').textContent = m.url
      if (typeof m.lane === 'number') $('lane').textContent = lanes > 1 ? `lane ${m.lane + 1}` : ''
    }
  } finally {
    decoding = false
  }
}

/** The end card: a completed audit's score and final counts. */
function final(m: Extract<Message, { type: 'progress' }>) {
  if (typeof m.score !== 'number') return
  $('final-score').textContent = String(Math.round(m.score))
  $('final-pages').textContent = String(m.pagesScanned + m.pagesFailed)
  const f = m.findings || {}
  $('final-findings').textContent = ['critical', 'high', 'medium', 'low'].map((k) => `${f[k] || 0} ${k}`).join(' · ')
  $('final').hidden = false
}

function onMessage(m: Message) {
  if (m.type === 'ready') setState('waiting')
  else if (m.type === 'frame' && typeof m.data === 'string') {
    pending = { data: m.data, ...(m.url ? { url: m.url } : {}), lane: m.lane }
    if (typeof m.lanes === 'number') laneButtons(m.lanes)
    void paint()
  } else if (m.type === 'progress') {
    setState(m.state)
    final(m)
    $('scanned').textContent = String(m.pagesScanned + m.pagesFailed)
    $('discovered').textContent = String(m.pagesDiscovered)
    if (m.currentUrl && !shown) $('url').textContent = m.currentUrl
    const f = m.findings || {}
    for (const k of ['critical', 'high', 'medium', 'low']) $(`f-${k}`).textContent = String(f[k] || 0)
    if (m.startedAt && !started) {
      started = Date.parse(m.startedAt) || 0
      elapsed()
    }
    if (typeof m.lanes === 'number') laneButtons(m.lanes)
  }
}

/**
 * A lost connection (an api restarting, a network blip) is opened again with the same token, this many times,
 * further apart each time; a connection that is admitted again starts the count over. Only "ended" and
 * "not valid" are final.
 */
const RETRY_MS = [500, 1_000, 2_000, 4_000, 8_000, 8_000, 8_000, 8_000]

function connect(attempt: number) {
  const path = location.pathname.replace(/\/+$/, '')
  const socket = new WebSocket(`${location.protocol === 'https:' ? 'wss://' : 'ws://'}${location.host}${path}/ws`)
  ws = socket
  socket.onopen = () => {
    socket.send(token)
    setState('waiting')
  }
  socket.onmessage = (ev) => {
    let m: Message
    try {
      m = JSON.parse(ev.data)
    } catch {
      return
    }
    if (m.type === 'ready') {
      attempt = 0
      if (following !== 'auto') socket.send(`focus:${following}`)
    }
    onMessage(m)
  }
  socket.onclose = (ev) => {
    if (ev.code === CLOSE_ENDED) notice('ended')
    else if (ev.code === CLOSE_POLICY) notice('invalid')
    else if (attempt < RETRY_MS.length) {
      setState('reconnecting')
      setTimeout(() => connect(attempt + 1), RETRY_MS[attempt])
    } else notice('lost')
  }
}

setInterval(elapsed, 1000)
setInterval(fps, 500)
if (!token) notice('invalid')
else connect(0)
