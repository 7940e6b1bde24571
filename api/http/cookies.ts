// Cookies of the dashboard. Always HttpOnly, Secure and SameSite=Lax: browsers treat http://127.0.0.1
// and http://localhost as secure contexts and keep Secure cookies there, so local use and tests work
// over plain HTTP while every real deployment (https) gets the same attributes.
export function readCookie(req: Request, name: string): string | null {
  const header = req.headers.get('cookie')
  if (!header) return null
  for (const part of header.split(';')) {
    const i = part.indexOf('=')
    if (i > 0 && part.slice(0, i).trim() === name) return part.slice(i + 1).trim()
  }
  return null
}

export function setCookie(name: string, value: string, opts: { maxAgeSeconds: number; path?: string }): string {
  return `${name}=${value}; Path=${opts.path ?? '/'}; Max-Age=${opts.maxAgeSeconds}; HttpOnly; Secure; SameSite=Lax`
}

export const clearCookie = (name: string, path = '/') => setCookie(name, '', { maxAgeSeconds: 0, path })
