// Connection strings and URLs with a password, in every form applications write them: scheme://user:pass@host
// (an empty user too), a password in the query as JDBC writes it, and ADO.NET / ODBC key=value strings.
// Placeholders and template variables are not passwords. Rules of util/secrets.ts.

import type { Rule } from './secrets.ts'

/** Passwords that are placeholders in examples and templates, not credentials. */
const PLACEHOLDER_PASSWORD =
  /^(?:pass(?:word|wd)?\d{0,3}|secret|changeme|change[-_]?me|your[-_]?pass(?:word)?|mypassword|mysecretpassword|example|test|testing|admin|root|guest|user|username|dbpass|db_password|pwd|p@ssw0rd|x{3,}|\*{3,}|\.{3,})$/i
const TEMPLATED = /[{}$%<>[\]]|^:/
const EXAMPLE_HOST =
  /(?:^|\.)(?:example\.(?:com|org|net)|test|invalid|localhost\.localdomain|your-?(?:host|domain|server)[\w.-]*|host|hostname|server)$/i

/** A password in a URL that is a real value, not a placeholder or a template variable. */
function realPassword(user: string, password: string, host: string): boolean {
  let decoded = password
  try {
    decoded = decodeURIComponent(password)
  } catch {}
  if (decoded.length < 6 || PLACEHOLDER_PASSWORD.test(decoded) || TEMPLATED.test(decoded) || TEMPLATED.test(user)) return false
  if (new Set(decoded).size < 4 || decoded === user) return false
  return !EXAMPLE_HOST.test(host)
}

const URL_SCHEMES = 'postgres(?:ql)?|mysql|mariadb|mongodb(?:\\+srv)?|rediss?|amqps?|mssql|sqlserver|https?|ftps?|smtps?'
const DATABASE_SCHEME = /^(?:postgres|mysql|mariadb|mongodb|redis|amqp|mssql|sqlserver)/i
const DATABASE_SCHEMES = 'postgres(?:ql)?|mysql|mariadb|mongodb(?:\\+srv)?|rediss?|amqps?|mssql|sqlserver|oracle'

/** The rules, judging placeholders themselves (a password of "changeme" is a template, not a leak). */
export const CONNECTION_STRING_RULES: Rule[] = [
  {
    placeholders: false,
    // scheme://user:password@host: database connection strings and basic-auth URLs.
    pattern: new RegExp(
      `(?<![A-Za-z0-9+.-])(?:${URL_SCHEMES}):\\/\\/([^:/?#@\\s"'\`<>]{0,100}):([^@/?#\\s"'\`<>]{1,200})@([A-Za-z0-9.-]{1,253})`,
      'gi',
    ),
    classify: (v) => {
      const m = /^([a-z+]+):\/\/([^:]*):(.*)@([^@]*)$/i.exec(v)
      if (!m || !realPassword(m[2]!, m[3]!, m[4]!)) return null
      return DATABASE_SCHEME.test(m[1]!)
        ? { kind: 'connection-string-password', exposure: 'secret', severity: 'critical' }
        : { kind: 'url-with-password', exposure: 'secret', severity: 'high' }
    },
  },
  {
    placeholders: false,
    // A database URL with the password in its query (jdbc:mysql://db/shop?user=shop&password=...).
    pattern: new RegExp(
      `(?<![A-Za-z0-9+.-])(?:${DATABASE_SCHEMES}):\\/\\/[^\\s"'\`<>?]{1,300}\\?(?:[^\\s"'\`<>#&]{0,200}&){0,8}(?:password|pwd|pass)=([^&#\\s"'\`<>;]{1,200})`,
      'gi',
    ),
    classify: (v) => {
      const m = /[?&](?:password|pwd|pass)=([^&#]*)$/i.exec(v)
      const host = /:\/\/(?:[^@/]*@)?([^/:?]*)/.exec(v)?.[1] ?? ''
      if (!m || !realPassword('', m[1]!, host)) return null
      return { kind: 'connection-string-password', exposure: 'secret', severity: 'critical' }
    },
  },
  {
    placeholders: false,
    // ADO.NET and ODBC connection strings: Server=...;Database=...;User Id=...;Password=...;
    pattern:
      /(?<![A-Za-z0-9_])(?:Server|Data Source|Host|Address)\s{0,3}=\s{0,3}[^;"'`<>\n]{1,200};(?:[^;"'`<>\n]{0,200};){0,8}\s{0,3}(?:Password|Pwd)\s{0,3}=\s{0,3}([^;"'`<>\s]{1,200})/gi,
    classify: (v) => {
      const password = /(?:Password|Pwd)\s*=\s*([^;]*)$/i.exec(v)?.[1] ?? ''
      const host = /(?:Server|Data Source|Host|Address)\s*=\s*([^;,]*)/i.exec(v)?.[1]?.trim() ?? ''
      if (!realPassword('', password, host.replace(/^tcp:/i, ''))) return null
      return { kind: 'connection-string-password', exposure: 'secret', severity: 'critical' }
    },
  },
]
