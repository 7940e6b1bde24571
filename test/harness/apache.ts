// A minimal httpd.conf for Debian's Apache run in the foreground on a loopback port, serving one directory whose
// .htaccess the test writes: what the tests of the Apache snippets in our advice start, on a port held for it
// (reservedPort in test/harness/ports.ts).
export const APACHE = '/usr/sbin/apache2'
export const APACHE_MODULES = '/usr/lib/apache2/modules'

export function apacheConfig(o: {
  root: string
  port: number
  www: string
  modules: readonly string[]
  /** Server-level lines after TypesConfig (e.g. DirectoryIndex). */
  server?: readonly string[]
  /** Lines inside <Directory www> before AllowOverride All (e.g. Options +Indexes). */
  directory?: readonly string[]
}): string {
  return [
    `ServerRoot ${o.root}`,
    `Listen 127.0.0.1:${o.port}`,
    // Any ratio makes apache2 set SO_REUSEPORT, so it binds beside the port's hold (reservedPort in
    // test/harness/ports.ts); one as large as this gives one listener bucket on any machine.
    'ListenCoresBucketsRatio 1024',
    'ServerName 127.0.0.1',
    `PidFile ${o.root}/httpd.pid`,
    `ErrorLog ${o.root}/error.log`,
    'User www-data',
    'Group www-data',
    ...o.modules.map((m) => `LoadModule ${m}_module ${APACHE_MODULES}/mod_${m}.so`),
    'TypesConfig /etc/mime.types',
    ...(o.server ?? []),
    `DocumentRoot ${o.www}`,
    `<Directory ${o.www}>`,
    ...(o.directory ?? []).map((l) => `  ${l}`),
    '  AllowOverride All',
    '  Require all granted',
    '</Directory>',
  ].join('\n')
}
