// The score badge of a shared report (/r/{slug}/badge), drawn by badge-maker (the library behind
// shields.io), so it looks like every other badge in a README: "app audit | 87 A-", coloured by grade.
import { createHash } from 'node:crypto'
import { makeBadge } from 'badge-maker'
import { gradeColour } from './pages.ts'

/** Browsers and README proxies (GitHub's camo) may keep it five minutes; an ETag makes the refresh cheap. */
export const BADGE_MAX_AGE_S = 300

/** The badge's SVG: one line of XML, about 1.3 KB, 20 px high like every shields.io badge. */
export function badgeSvg(score: number | null, grade: string | null): string {
  const message = score === null || grade === null ? 'pending' : `${score} ${grade}`
  return makeBadge({ label: 'app audit', message, color: gradeColour(grade), style: 'flat' })
}

/** A strong validator of the SVG's bytes. */
export const badgeEtag = (svg: string) => `"${createHash('sha256').update(svg).digest('base64url').slice(0, 27)}"`

/** True when an If-None-Match header names this ETag (or is *). */
export function matchesEtag(header: string | null, etag: string): boolean {
  if (!header) return false
  return header
    .slice(0, 2_000)
    .split(',')
    .map((t) => t.trim().replace(/^W\//, ''))
    .some((t) => t === etag || t === '*')
}
