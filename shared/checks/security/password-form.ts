// Password forms in the rendered page: where and how they send the password.

import { type CheckOutcome, defineCheck } from '../types.ts'
import { registrableDomain } from '../util/domains.ts'
import { documentBaseUrl, startTags } from '../util/html.ts'

const MAX_FORMS = 20
const FORM = /<form\b[\s\S]{0,200000}?<\/form\s*>/gi

export interface PasswordForm {
  action: string
  /** 'get' stands for the method; POST otherwise. */
  problems: Array<'http' | 'get' | 'other-site'>
}

/** Password forms of a document, with what is wrong in each. */
export function passwordForms(html: string, pageUrl: string): PasswordForm[] {
  const base = documentBaseUrl(html, pageUrl)
  const page = new URL(pageUrl)
  const out: PasswordForm[] = []
  let n = 0
  for (const m of html.matchAll(FORM)) {
    if (++n > MAX_FORMS) break
    const tags = startTags(m[0], ['form', 'input'])
    if (!tags.some((t) => t.name === 'input' && (t.attrs.type ?? '').trim().toLowerCase() === 'password')) continue
    const form = tags[0]!.attrs
    const explicitAction = form.action !== undefined && form.action.trim() !== ''
    const method = (form.method ?? '').trim().toLowerCase() || 'get'
    let action: URL
    try {
      action = new URL(explicitAction ? form.action!.trim() : pageUrl, base)
    } catch {
      continue
    }
    const problems: PasswordForm['problems'] = []
    const otherSite = registrableDomain(action.hostname) !== registrableDomain(page.hostname)
    // Over http: to an http address from an https page, or to another host in clear text. A relative action on a
    // plain-http page is the whole site's problem (https-redirect), not this form's.
    if (action.protocol === 'http:' && (page.protocol === 'https:' || action.origin !== page.origin)) problems.push('http')
    // GET puts the password in the URL. A form with neither action nor method is submitted by script.
    if (method === 'get' && (explicitAction || form.method !== undefined)) problems.push('get')
    if (otherSite) problems.push('other-site')
    if (problems.length) out.push({ action: `${action.origin}${action.pathname}`, problems })
  }
  return out
}

export const passwordForm = defineCheck({
  id: 'password-form',
  category: 'security',
  title: 'Password forms post over HTTPS, with POST, to the same site',
  failTitle: 'A password form sends the password unsafely',
  description: 'Reads the forms of the rendered page that hold a password field: their action address and method.',
  why:
    'A password posted over http can be read and changed on the way (public Wi-Fi, a proxy); one sent with GET lands in the ' +
    'URL, so in history, server logs and Referer headers; one posted to another site hands it to that site.',
  confirmation:
    'Fails (high) when a password form posts to an http address from an https page or to another host over http, or uses GET ' +
    '(method="get", or no method with an explicit action). Warns (medium) when it posts to another site (registrable domain), ' +
    'over https. Not findings: forms without action and method (submitted by script), a relative action on a plain-http page ' +
    '(reported by https-redirect). Evidence: the action without its query and the problems ("get" for the method), for up to 5 forms.',
  severity: 'high',
  fix: {
    generic:
      'Post password forms with method="post" to an https address on your own site (action="/login"), and serve the login page ' +
      'itself over https. If sign-in happens on an identity provider, redirect there (OAuth/OIDC) instead of posting the password ' +
      'to it from your page.',
    vercel:
      'Change the form to <form action="/api/login" method="post"> handled by your own function, over https (Vercel serves https only).',
    netlify: 'Change the form to <form action="/.netlify/functions/login" method="post"> (or your own /login), and enable Force HTTPS.',
    nextjs:
      'Use a server action or a route handler on your own origin: <form action={login}> (server action) or action="/api/login" ' +
      'method="post"; never method="get" for a password.',
    nginx:
      'Serve the login page and its action over https (return 301 https://$host$request_uri; in the port 80 server) and point ' +
      'the form at your own path: action="/login" method="post".',
    cloudflare:
      'Turn on SSL/TLS > Edge Certificates > Always Use HTTPS, and change the form to post to your own https path with method="post".',
  },
  requires: ['page'],
  run: ({ page }): CheckOutcome => {
    const forms = passwordForms(page.html, page.finalUrl)
    if (forms.length === 0) return { status: 'pass', evidence: {}, summary: 'No unsafe password form.' }
    const evidence = { forms: forms.slice(0, 5), ...(forms.length > 5 ? { count: forms.length } : {}) }
    const serious = forms.find((f) => f.problems.includes('http') || f.problems.includes('get'))
    const f = serious ?? forms[0]!
    const words = f.problems.map((p) => (p === 'http' ? 'over http' : p === 'get' ? 'with GET' : 'to another site'))
    const summary = `Password form posts ${words.join(', ')}.`
    return serious ? { status: 'fail', evidence, summary } : { status: 'warn', severity: 'medium', evidence, summary }
  },
})
