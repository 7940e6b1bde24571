// Per-platform snippets for fixes that come down to sending response headers on every path.

export interface Header {
  key: string
  value: string
}

export interface PlatformFixes {
  vercel: string
  netlify: string
  nextjs: string
  nginx: string
  cloudflare: string
}

const json = (v: unknown) => JSON.stringify(v, null, 2)

/** How to send these headers on every response, per platform. */
export function headerFixes(headers: Header[]): PlatformFixes {
  const nginxValue = (v: string) => v.replace(/"/g, '\\"')
  return {
    vercel: `In vercel.json:\n${json({ headers: [{ source: '/(.*)', headers }] })}`,
    netlify: `In public/_headers (or the publish directory):\n/*\n${headers.map((h) => `  ${h.key}: ${h.value}`).join('\n')}`,
    nextjs: [
      'In next.config.js:',
      'module.exports = {',
      '  async headers() {',
      '    return [{',
      "      source: '/:path*',",
      '      headers: [',
      ...headers.map((h) => `        { key: '${h.key}', value: ${JSON.stringify(h.value)} },`),
      '      ],',
      '    }]',
      '  },',
      '}',
    ].join('\n'),
    nginx: `In the server block (always: also on error responses):\n${headers
      .map((h) => `add_header ${h.key} "${nginxValue(h.value)}" always;`)
      .join('\n')}`,
    cloudflare: `Rules > Transform Rules > Modify Response Header > Create rule (all incoming requests):\n${headers
      .map((h) => `Set static  ${h.key} = ${h.value}`)
      .join('\n')}`,
  }
}
