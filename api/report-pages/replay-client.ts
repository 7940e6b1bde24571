// The replay player's script, bundled for the browser (api/http/client-script.ts). The index of frames
// (when, which URL) is read from the page's JSON script; each frame is an <img> loaded from the frame route
// named by the player's data-base. Play steps through the stills at 400 ms each; the slider seeks.

// A module, so its names stay out of the page's global scope (the bundle wraps it in a function too).
export {}

interface Frame {
  seq: number
  at: string
  url: string
}

const root = document.getElementById('replay-player')
const frames: Frame[] = root ? JSON.parse(document.getElementById('replay-index')?.textContent || '[]') : []
if (root && frames.length > 0) {
  const base = root.getAttribute('data-base')
  const img = document.getElementById('replay-img') as HTMLImageElement
  const seek = document.getElementById('replay-seek') as HTMLInputElement
  const play = document.getElementById('replay-play')!
  const at = document.getElementById('replay-at')!
  const url = document.getElementById('replay-url')!
  const t0 = Date.parse(frames[0]!.at) || 0
  let timer: ReturnType<typeof setInterval> | null = null
  const show = (i: number) => {
    const f = frames[i]!
    img.src = `${base}/${f.seq}`
    img.alt = `The crawler on ${f.url}`
    seek.value = String(i)
    const s = Math.max(0, Math.round(((Date.parse(f.at) || t0) - t0) / 1000))
    at.textContent = `${i + 1} of ${frames.length} · ${Math.floor(s / 60)}:${`0${s % 60}`.slice(-2)}`
    url.textContent = f.url
  }
  const stop = () => {
    if (timer) clearInterval(timer)
    timer = null
    play.textContent = 'Play'
  }
  seek.addEventListener('input', () => {
    stop()
    show(Number(seek.value))
  })
  play.addEventListener('click', () => {
    if (timer) return stop()
    let i = Number(seek.value)
    if (i >= frames.length - 1) i = -1
    play.textContent = 'Pause'
    timer = setInterval(() => {
      i++
      if (i >= frames.length) return stop()
      show(i)
    }, 400)
  })
  show(0)
}
