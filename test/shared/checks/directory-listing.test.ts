import { describe, expect, test } from 'bun:test'
import { directoryListing, directoryListingServer, listedNames } from '../../../shared/checks/exposure/directory-listing.ts'
import type { ProbeResult } from '../../../shared/checks/types.ts'
import { makeArtifacts, probe, SPA_HTML } from './artifacts.ts'

const NGINX = `<html>
<head><title>Index of /uploads/</title></head>
<body>
<h1>Index of /uploads/</h1><hr><pre><a href="../">../</a>
<a href="2026/">2026/</a>                                              01-Oct-2026 10:00       -
<a href="backup.sql.gz">backup.sql.gz</a>                                      01-Oct-2026 10:00   12345
<a href="invoice%20042.pdf">invoice 042.pdf</a>                                  01-Oct-2026 10:00   23456
</pre><hr></body>
</html>`

const APACHE = `<!DOCTYPE HTML PUBLIC "-//W3C//DTD HTML 3.2 Final//EN">
<html>
 <head>
  <title>Index of /static</title>
 </head>
 <body>
<h1>Index of /static</h1>
  <table>
   <tr><th valign="top"><img src="/icons/blank.gif" alt="[ICO]"></th><th><a href="?C=N;O=D">Name</a></th><th><a href="?C=M;O=A">Last modified</a></th></tr>
<tr><td valign="top"><img src="/icons/back.gif" alt="[PARENTDIR]"></td><td><a href="/">Parent Directory</a></td></tr>
<tr><td valign="top"><img src="/icons/text.gif" alt="[TXT]"></td><td><a href="app.js">app.js</a></td></tr>
</table>
</body></html>`

const IIS = `<html><head><title>example.com - /assets/</title></head><body><H1>example.com - /assets/</H1><hr>

<pre><A HREF="/">[To Parent Directory]</A><br><br> 10/1/2026  10:00 AM        &lt;dir&gt; <A HREF="/assets/img/">img</A><br> 10/1/2026  10:00 AM         1234 <A HREF="/assets/site.css">site.css</A><br></pre><hr></body></html>`

const PYTHON = `<!DOCTYPE HTML>
<html lang="en">
<head>
<meta charset="utf-8">
<title>Directory listing for /</title>
</head>
<body>
<h1>Directory listing for /</h1>
<hr>
<ul>
<li><a href=".env">.env</a></li>
<li><a href="src/">src/</a></li>
</ul>
<hr>
</body>
</html>`

const run = (probes: Record<string, ProbeResult> = {}, mainBody = SPA_HTML) =>
  directoryListing.run(makeArtifacts({ probes: { ...makeArtifacts().probes, ...probes }, mainResponse: { body: mainBody } }))

describe('directory-listing', () => {
  test('fails an nginx autoindex on a probed directory, with the listed names: a backup first, and high', () => {
    const r = run({ '/uploads/': probe('/uploads/', NGINX, 200, 'text/html') })
    expect(r.status).toBe('fail')
    expect(r.severity).toBe('high')
    expect(r.evidence.listings).toEqual([
      {
        url: 'https://example.com/uploads/',
        status: 200,
        server: 'nginx',
        names: ['backup.sql.gz', '2026/', 'invoice 042.pdf'],
        sensitive: { backups: ['backup.sql.gz'] },
      },
    ])
    expect(r.summary).toBe(
      'https://example.com/uploads/ is a directory listing (nginx): backup.sql.gz, 2026/, invoice 042.pdf. Listed: backups.',
    )
  })

  test('recognises Apache, IIS and Python http.server listings', () => {
    expect(directoryListingServer(APACHE)).toBe('Apache')
    expect(listedNames(APACHE)).toEqual(['app.js'])
    expect(directoryListingServer(IIS)).toBe('IIS')
    expect(listedNames(IIS)).toEqual(['img/', 'site.css'])
    expect(directoryListingServer(PYTHON)).toBe('Python http.server')
    expect(
      directoryListingServer('<html><head><title>listing directory /static/</title></head><body><ul id="files"></ul></body></html>'),
    ).toBe('Node serve-index')
  })

  test('fails a listing served as the main page', () => {
    const r = run({}, PYTHON)
    expect(r.status).toBe('fail')
    expect(r.evidence.listings).toMatchObject([{ url: 'https://example.com/', server: 'Python http.server', names: ['.env', 'src/'] }])
  })

  test('passes index.html for directories, 403 and 404 pages', () => {
    expect(run({ '/assets/': probe('/assets/', SPA_HTML, 200, 'text/html') }).status).toBe('pass')
    expect(
      run({
        '/static/': probe(
          '/static/',
          '<html><head><title>403 Forbidden</title></head><body><h1>403 Forbidden</h1></body></html>',
          403,
          'text/html',
        ),
      }).status,
    ).toBe('pass')
    expect(run({ '/uploads/': probe('/uploads/', 'Not Found', 404) }).status).toBe('pass')
  })

  test('passes a page that only mentions "Index of /" in its text', () => {
    const page =
      '<!doctype html><html><head><title>Docs</title></head><body><p>Apache shows a page titled Index of / with a Parent Directory link when autoindex is on.</p></body></html>'
    expect(run({}, page).status).toBe('pass')
  })
})
