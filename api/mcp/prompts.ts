// MCP prompts: two ready-made tasks a user can hand a coding agent, written as the tool calls that do them.
// audit-and-fix: scan, read the fix brief for the detected platform, apply it, verify. ci-gate: pass or fail
// a deploy on a score and severity threshold, and wire the same gate into CI. Arguments are checked; each
// value is quoted into the text as JSON, never spliced in raw.
import type { Server } from '@modelcontextprotocol/sdk/server/index.js'
import {
  ErrorCode,
  GetPromptRequestSchema,
  type GetPromptResult,
  ListPromptsRequestSchema,
  type Prompt,
} from '@modelcontextprotocol/sdk/types.js'
import { PLATFORMS } from '../../shared/checks/types.ts'

export const SEVERITIES = ['critical', 'high', 'medium', 'low'] as const

type Args = Record<string, string>

interface PromptDef extends Prompt {
  /** A message why the arguments are refused, or null. */
  check(args: Args): string | null
  text(args: Args, docs: string): string
}

const q = (s: string) => JSON.stringify(s)

/** The checks every prompt makes of `url`, `platform`, `minScore` and `failOn` when given. */
function checkCommon(args: Args): string | null {
  if (!args.url) return 'url is required'
  if (args.url.length > 2048) return 'url is longer than 2048 characters'
  if (args.platform !== undefined && !(PLATFORMS as readonly string[]).includes(args.platform))
    return `platform must be one of: ${PLATFORMS.join(', ')}`
  if (args.minScore !== undefined && !/^(100|[1-9]?[0-9])$/.test(args.minScore)) return 'minScore must be an integer from 0 to 100'
  if (args.failOn !== undefined && !(SEVERITIES as readonly string[]).includes(args.failOn))
    return `failOn must be one of: ${SEVERITIES.join(', ')}`
  return null
}

const URL_ARG = { name: 'url', description: "The app's URL (completes with this account's apps).", required: true }

export const PROMPTS: PromptDef[] = [
  {
    name: 'audit-and-fix',
    title: 'Audit and fix an app',
    description: 'Scan an app, apply the fix brief for its platform in this codebase, and verify with a new scan.',
    arguments: [URL_ARG, { name: 'platform', description: 'Write the fixes for this platform, not the detected one.' }],
    check: checkCommon,
    text: (a) =>
      [
        `Audit ${q(a.url!)} and fix what it finds in this codebase:`,
        `1. scan_app {"url":${q(a.url!)}}. (A whole site: audit_app, poll get_audit until completed, and use auditId below.)`,
        `2. get_fix_brief {"scanId":"<the scan's id>"${a.platform ? `,"platform":${q(a.platform)}` : ''}}: each item says what to change, where, and how to verify, for the platform ${a.platform ? 'given' : 'detected from the responses'}. explain_check {"checkId":"..."} explains a check.`,
        '3. Make the changes, highest impact first, and only those the brief names.',
        '4. Once they are deployed, scan_app again and compare score and failing checks with the first scan; repeat from 2 for what still fails.',
      ].join('\n'),
  },
  {
    name: 'ci-gate',
    title: 'Gate a deploy on its audit',
    description: 'Pass or fail a deployed app on a minimum score and a severity, then add the same gate to CI.',
    arguments: [
      URL_ARG,
      { name: 'minScore', description: 'Lowest passing score, 0-100 (default 80).' },
      { name: 'failOn', description: 'Fail on a finding of this severity or worse: critical, high (default), medium, low.' },
    ],
    check: checkCommon,
    text: (a, docs) => {
      const min = a.minScore ?? '80'
      const failOn = a.failOn ?? 'high'
      const worse = SEVERITIES.slice(0, SEVERITIES.indexOf(failOn as (typeof SEVERITIES)[number]) + 1).join(' or ')
      return [
        `Gate ${q(a.url!)}:`,
        `1. scan_app {"url":${q(a.url!)}}. FAIL when score < ${min} or a check with status fail or warn has severity ${worse}; else PASS.`,
        '2. On FAIL, list each such check (id, severity, title) and get_fix_brief {"scanId":"<its id>"} for the fixes; change nothing.',
        `3. Add the gate to this repository's CI after the deploy step: appaudit scan ${q(a.url!)} --min-score ${min} --fail-on ${failOn}, with APPAUDIT_URL and APPAUDIT_KEY (a CI secret) set (${docs}).`,
      ].join('\n')
    },
  },
]

const PROMPT_LIST = { prompts: PROMPTS.map(({ check: _c, text: _t, ...p }) => p) }

const invalid = (message: string) => Object.assign(new Error(`Invalid params: ${message}`), { code: ErrorCode.InvalidParams })

/** Declares prompts and answers prompts/list and prompts/get. `docsUrl` is the CI page of the docs. */
export function registerPrompts(server: Server, docsUrl: string): void {
  server.registerCapabilities({ prompts: { listChanged: false } })
  server.setRequestHandler(ListPromptsRequestSchema, async () => PROMPT_LIST)
  server.setRequestHandler(GetPromptRequestSchema, async (req): Promise<GetPromptResult> => {
    const { name } = req.params
    const prompt = PROMPTS.find((p) => p.name === name)
    if (!prompt) throw invalid(`Unknown prompt: ${name.slice(0, 80)}. prompts/list lists ${PROMPTS.map((p) => p.name).join(', ')}.`)
    const args = req.params.arguments ?? {}
    const unknown = Object.keys(args).find((k) => !prompt.arguments?.some((a) => a.name === k))
    if (unknown !== undefined) throw invalid(`${name} takes no argument ${JSON.stringify(unknown.slice(0, 80))}`)
    const refused = prompt.check(args)
    if (refused) throw invalid(`${name}: ${refused}`)
    return {
      description: prompt.description,
      messages: [{ role: 'user', content: { type: 'text', text: prompt.text(args, docsUrl) } }],
    }
  })
}
