// The public documents (/llms.txt, /api/skills.md, /agent-prompt, /llms-full.txt) and the
// /docs pages, built once at start on plain values from the markdown under docs/, the same pages a person
// reads: {base} becomes this deployment's base URL, reference markers expand from the registries
// (reference.ts), and each page is rendered to HTML once (markdown.ts). Nothing here runs per request.
import { expandReferenceMarkers } from './reference.ts'
import { markdownRenderer, stripFrontMatter } from './markdown.ts'

/** One markdown file of docs/: its name (tools.md) and its text. */
export interface DocSource {
  file: string
  text: string
}

/** Where a page is listed in llms.txt: the docs, what is written for agents, or the optional background. */
export type DocSection = 'docs' | 'agents' | 'optional'

export interface DocPage {
  slug: string
  title: string
  /** The first sentence after the title: the line llms.txt and the /docs index show. */
  summary: string
  section: DocSection
  /** The page as served at /docs/{slug}.md: base URL in, markers expanded, front matter kept. */
  markdown: string
  /** The rendered article of /docs/{slug}. */
  html: string
}

export interface PublicDocuments {
  pages: readonly DocPage[]
  page(slug: string): DocPage | undefined
  llmsTxt: string
  llmsFullTxt: string
  skillMd: string
  agentPrompt: string
}

/** Reading order; a page not named here comes after these, by name, among the docs. */
const ORDER: ReadonlyArray<readonly [string, DocSection]> = [
  ['getting-started', 'docs'],
  ['tools', 'docs'],
  ['checks', 'docs'],
  ['errors', 'docs'],
  ['security', 'docs'],
  ['agent-skill', 'agents'],
  ['agent-prompt', 'agents'],
  ['architecture', 'optional'],
  ['decisions', 'optional'],
  ['observatory-compare', 'optional'],
  ['billing', 'optional'],
]

export const SKILL_SLUG = 'agent-skill'
export const PROMPT_SLUG = 'agent-prompt'

const SUMMARY =
  'An audit service for web applications, spoken to over MCP: it scans a page or crawls a whole site in a real Chromium and ' +
  'over plain HTTP, and returns a score, a grade, every check with its evidence, and advice ordered by impact that a coding agent can act on.'

/** A page's slug from its file name, or null for what is not a page (a file that is not markdown, a hidden one). */
export const slugOf = (file: string) => /^([a-z0-9][a-z0-9-]*)\.md$/.exec(file)?.[1] ?? null

function titleOf(markdown: string, slug: string): string {
  const h1 = /^# (.+)$/m.exec(stripFrontMatter(markdown))
  return h1 ? h1[1]!.replace(/`/g, '').trim() : slug
}

/** The first sentence of the first paragraph after the title, at most about 200 characters. */
function summaryOf(markdown: string): string {
  const afterTitle = stripFrontMatter(markdown).replace(/^[\s\S]*?^# .*$/m, '')
  const paragraph = afterTitle
    .split(/\r?\n\s*\r?\n/)
    .map((p) => p.trim())
    .find((p) => p !== '' && !/^(```|\||#|-|\*|>|\{)/.test(p))
  if (!paragraph) return ''
  const text = paragraph.replace(/\s+/g, ' ')
  const sentence = /^(.+?[.!?])(?:\s|$)/.exec(text)?.[1] ?? text
  return sentence.length <= 200 ? sentence : `${sentence.slice(0, sentence.lastIndexOf(' ', 197))} …`
}

function ordered(sources: readonly DocSource[]): Array<DocSource & { slug: string; section: DocSection }> {
  const rank = new Map(ORDER.map(([slug], i) => [slug, i]))
  return sources
    .flatMap((s) => {
      const slug = slugOf(s.file)
      return slug ? [{ ...s, slug, section: ORDER.find(([o]) => o === slug)?.[1] ?? ('docs' as const) }] : []
    })
    .sort((a, b) => (rank.get(a.slug) ?? ORDER.length) - (rank.get(b.slug) ?? ORDER.length) || a.slug.localeCompare(b.slug))
}

export function buildPublicDocuments(opts: { baseUrl: string; version: string; sources: readonly DocSource[] }): PublicDocuments {
  const { baseUrl } = opts
  const list = ordered(opts.sources)
  const render = markdownRenderer(new Set(list.map((s) => s.slug)))
  const pages: DocPage[] = list.map((s) => {
    // A replacer function, so a "$" in the base URL is never read as a replacement pattern.
    const markdown = expandReferenceMarkers(s.text, s.file).replace(/\{base\}/g, () => baseUrl)
    return {
      slug: s.slug,
      title: titleOf(markdown, s.slug),
      summary: summaryOf(markdown),
      section: s.section,
      markdown,
      html: render(markdown),
    }
  })
  const bySlug = new Map(pages.map((p) => [p.slug, p]))
  const required = (slug: string) => {
    const p = bySlug.get(slug)
    if (!p) throw new Error(`docs/${slug}.md is missing: the public documents are built from it`)
    return p
  }
  return {
    pages,
    page: (slug) => bySlug.get(slug),
    llmsTxt: llmsTxt(pages, baseUrl, opts.version),
    llmsFullTxt: llmsFullTxt(pages, baseUrl),
    skillMd: required(SKILL_SLUG).markdown,
    agentPrompt: required(PROMPT_SLUG).markdown,
  }
}

const SECTION_TITLES: Record<DocSection, string> = { docs: 'Docs', agents: 'For agents', optional: 'Optional' }

/** llms.txt (llmstxt.org): the title, a summary in a blockquote, a few facts, then lists of links by section. */
function llmsTxt(pages: readonly DocPage[], baseUrl: string, version: string): string {
  const link = (p: DocPage, url = `${baseUrl}/docs/${p.slug}.md`) => `- [${p.title}](${url})${p.summary ? `: ${p.summary}` : ''}`
  const special: Record<string, string> = { [SKILL_SLUG]: `${baseUrl}/api/skills.md`, [PROMPT_SLUG]: `${baseUrl}/agent-prompt` }
  const out = [
    '# App Audit',
    '',
    `> ${SUMMARY}`,
    '',
    `- MCP endpoint: ${baseUrl}/api/mcp (JSON-RPC 2.0 over MCP streamable HTTP; send \`Accept: application/json, text/event-stream\`).`,
    '- Authentication: `Authorization: Bearer act_...` (an API key from the dashboard) or an OAuth `mca_` token; an MCP client that speaks OAuth needs only the URL.',
    `- Every documentation page as one file: ${baseUrl}/llms-full.txt. Pages for people: ${baseUrl}/docs.`,
    `- Version ${version}.`,
  ]
  for (const section of ['docs', 'agents', 'optional'] as const) {
    const inSection = pages.filter((p) => p.section === section)
    if (inSection.length === 0) continue
    out.push('', `## ${SECTION_TITLES[section]}`, '', ...inSection.map((p) => link(p, special[p.slug])))
  }
  return `${out.join('\n')}\n`
}

/** Every page in reading order, one markdown document; each page keeps its own top-level heading. */
function llmsFullTxt(pages: readonly DocPage[], baseUrl: string): string {
  const head = [
    '# App Audit: the documentation',
    '',
    `> ${SUMMARY}`,
    '',
    `Every page of ${baseUrl}/docs in reading order: ${pages.map((p) => p.title).join(', ')}. The MCP endpoint is ${baseUrl}/api/mcp.`,
  ].join('\n')
  const bodies = pages.map((p) => `<!-- ${baseUrl}/docs/${p.slug} -->\n\n${stripFrontMatter(p.markdown).trim()}`)
  return `${[head, ...bodies].join('\n\n---\n\n')}\n`
}
