// Release lines of server software and runtimes whose upstream support has ended, as of the date below.
// Dates are the projects' own (php.net/supported-versions, djangoproject.com/download, httpd.apache.org,
// python.org/downloads, openssl-library.org/policies/releasestrat, Microsoft's lifecycle pages for the
// Windows Server releases that ship each IIS), as collected by endoflife.date. Ranges use the grammar of
// ../util/semver.ts. Updated by hand with each release line that ends: see docs/checks-data.md.

/** When the table was last compared with its sources; shown in the check's description and evidence. */
export const END_OF_LIFE_DATA = 'in November 2026 (endoflife.date and the projects\u2019 own support pages)'

export interface EndOfLifeLine {
  /** Which banner or page names the product: the key the check reads versions under. */
  product: 'php' | 'django' | 'apache' | 'python' | 'openssl' | 'iis'
  name: string
  /** Affected versions (the release lines that have ended). */
  range: string
  /** By when every one of those lines had ended (the last to end), ISO date. */
  ended: string
  /** What to move to. */
  upgrade: string
}

export const END_OF_LIFE: EndOfLifeLine[] = [
  {
    product: 'php',
    name: 'PHP',
    range: '<8.2.0',
    ended: '2025-12-31',
    upgrade: 'PHP 8.4 (8.2 gets security fixes until 31 December 2026)',
  },
  { product: 'django', name: 'Django', range: '<5.2.0', ended: '2026-04-30', upgrade: 'Django 5.2 LTS (supported until April 2028)' },
  { product: 'apache', name: 'Apache httpd', range: '<2.4.0', ended: '2017-07-11', upgrade: 'Apache httpd 2.4, the only maintained line' },
  { product: 'python', name: 'Python', range: '<3.11.0', ended: '2026-10-31', upgrade: 'Python 3.13 or later' },
  { product: 'openssl', name: 'OpenSSL', range: '<3.0.0', ended: '2023-09-11', upgrade: 'OpenSSL 3.5 LTS' },
  { product: 'iis', name: 'IIS', range: '<10.0.0', ended: '2023-10-10', upgrade: 'Windows Server 2019 or later (IIS 10)' },
]
