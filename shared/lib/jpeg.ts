// What a JPEG is, read from its bytes: its size in pixels (the frame header) and the quality its encoder
// was given, estimated from the luminance quantization table against the IJG table that libjpeg (and so
// Chromium) scales by quality. The live view checks its frames' width with it; tests and the viewer bench
// hold frames to the readable floor with it, without looking at them.

/** The IJG luminance table (ITU T.81 K.1) in zigzag order, as a JPEG stores it. */
const IJG_LUMA = [
  16, 11, 12, 14, 12, 10, 16, 14, 13, 14, 18, 17, 16, 19, 24, 40, 26, 24, 22, 22, 24, 49, 35, 37, 29, 40, 58, 51, 61, 60, 57, 51, 56, 55,
  64, 72, 92, 78, 64, 68, 87, 69, 55, 56, 80, 109, 81, 87, 95, 98, 103, 104, 103, 62, 77, 113, 121, 112, 100, 120, 92, 101, 103, 99,
]

export interface JpegInfo {
  width: number
  height: number
  /** 1 to 100, as libjpeg's jpeg_set_quality was given it; NaN without a luminance table. */
  quality: number
}

/** The libjpeg quality whose scaled IJG table is nearest the given one (sum of absolute differences). */
function qualityOf(table: number[]): number {
  let best = Number.NaN
  let bestErr = Infinity
  for (let q = 1; q <= 100; q++) {
    const scale = q < 50 ? 5000 / q : 200 - 2 * q
    let err = 0
    for (let i = 0; i < 64; i++) err += Math.abs(Math.min(255, Math.max(1, Math.floor((IJG_LUMA[i]! * scale + 50) / 100))) - table[i]!)
    if (err < bestErr) {
      bestErr = err
      best = q
    }
  }
  return best
}

/**
 * Reads a JPEG's header (base64, or bytes), the start of one being enough; null when it is not a JPEG or
 * its frame header is not within what was given.
 */
export function jpegInfo(data: string | Uint8Array): JpegInfo | null {
  const b = typeof data === 'string' ? Buffer.from(data, 'base64') : Buffer.from(data)
  if (b[0] !== 0xff || b[1] !== 0xd8) return null
  let quality = Number.NaN
  for (let i = 2; i + 4 <= b.length; ) {
    if (b[i] !== 0xff) return null
    const marker = b[i + 1]!
    const len = b.readUInt16BE(i + 2)
    const end = i + 2 + len
    if (end > b.length) return null
    if (marker === 0xdb) {
      // One or more tables: precision and id in a byte, then 64 values of 8 or 16 bits.
      for (let j = i + 4; j < end; ) {
        const wide = b[j]! >> 4
        const values = Array.from({ length: 64 }, (_, k) => (wide ? b.readUInt16BE(j + 1 + 2 * k) : b[j + 1 + k]!))
        if ((b[j]! & 15) === 0) quality = qualityOf(values)
        j += 1 + 64 * (wide ? 2 : 1)
      }
    } else if (marker >= 0xc0 && marker <= 0xc2) {
      return { height: b.readUInt16BE(i + 5), width: b.readUInt16BE(i + 7), quality }
    } else if (marker === 0xda) return null
    i = end
  }
  return null
}
