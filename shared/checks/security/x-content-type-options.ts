// X-Content-Type-Options: nosniff (Fetch §"X-Content-Type-Options" header: the first value decides).

import { defineCheck } from '../types.ts'
import { headerFixes } from '../util/fix.ts'
import { headerValue, splitList } from '../util/http.ts'

export const xContentTypeOptions = defineCheck({
  id: 'x-content-type-options',
  category: 'security',
  title: 'X-Content-Type-Options is nosniff',
  failTitle: 'X-Content-Type-Options is not nosniff',
  description: 'Reads the X-Content-Type-Options header of the main response.',
  why:
    'Without nosniff, browsers may guess a response type from its content and run an uploaded or user-influenced file as a script or ' +
    'stylesheet.',
  confirmation:
    'Passes when the first value of X-Content-Type-Options is nosniff (case-insensitive, surrounding spaces ignored), as the Fetch ' +
    'standard reads it. Fails when the header is missing or holds anything else.',
  severity: 'low',
  fix: {
    generic: 'Send "X-Content-Type-Options: nosniff" on every response, and serve every file with its correct Content-Type.',
    ...headerFixes([{ key: 'X-Content-Type-Options', value: 'nosniff' }]),
  },
  fixTarget: { kind: 'headers', headers: ['x-content-type-options'] },
  requires: ['mainResponse'],
  run: ({ mainResponse }) => {
    const header = headerValue(mainResponse.headers, 'x-content-type-options')
    const evidence = { url: mainResponse.url, header }
    if (header === null) return { status: 'fail', evidence, summary: 'No X-Content-Type-Options header.' }
    const first = splitList(header)[0]?.toLowerCase()
    if (first === 'nosniff') return { status: 'pass', evidence, summary: 'X-Content-Type-Options is nosniff.' }
    return { status: 'fail', evidence, summary: `X-Content-Type-Options is "${header}", not nosniff.` }
  },
})
