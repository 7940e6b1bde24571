// The rules GitHub code scanning applies to an uploaded SARIF log, beyond the SARIF 2.1.0 schema, written
// out as checks so a test can assert that an export would be ingested whole and shown well. Sources:
//   - GitHub's "SARIF support for code scanning": a result needs ruleId, message.text and at least one
//     location (only the first is used); locations are repository paths (relative, or file: URIs), with a
//     region whose startLine is 1 or more; partialFingerprints match a result across runs; a rule has an id,
//     shortDescription, fullDescription, help (text) and optionally helpUri, defaultConfiguration.level,
//     properties.tags, precision and security-severity (a number from 0.0 to 10.0, read on `security` rules);
//   - GitHub's "SARIF results exceed limits": 20 runs a file, 25,000 results and 25,000 rules a run,
//     1,000 locations a result, 20 tags a rule (hard limits: the upload is rejected beyond them);
//   - the processing errors on which github/codeql-action's upload-sarif reports an upload as invalid:
//     "an invalid URI was provided as a SARIF location", "locationFromSarifResult: expected artifact
//     location", "could not convert rules: invalid security severity value, is not a number", and the
//     URI scheme mismatch below;
//   - the code scanning rules of Microsoft's SARIF validator (sarif-sdk GH1001, GH1003, GH1005, GH1007,
//     GH2012), and "SARIF URI scheme "https" did not match the checkout URI scheme "file"", the error that
//     rejects a whole upload whose absolute URIs use another scheme (github/codeql-action#754).

const LEVELS = new Set(['none', 'note', 'warning', 'error'])
const PRECISIONS = new Set(['very-high', 'high', 'medium', 'low'])
const LIMITS = { runs: 20, results: 25_000, rules: 25_000, locations: 1_000, tags: 20 }

const text = (v: unknown) => typeof v === 'string' && v.trim().length > 0
const SCHEME = /^[A-Za-z][A-Za-z0-9+.-]*:/

/** What is wrong with one artifact URI as GitHub reads it: a scheme other than file, or a path out of the checkout. */
export function uriProblem(uri: unknown): string | null {
  if (typeof uri !== 'string' || uri.length === 0) return 'no uri'
  const scheme = SCHEME.exec(uri)?.[0]
  if (scheme && scheme.toLowerCase() !== 'file:')
    return `SARIF URI scheme "${scheme.slice(0, -1)}" did not match the checkout URI scheme "file"`
  if (scheme) return null
  let resolved: URL
  try {
    resolved = new URL(uri, 'file:///checkout/')
  } catch {
    return `${uri} is not a URI reference`
  }
  if (!resolved.pathname.startsWith('/checkout/')) return `${uri} leaves the checkout`
  if (/[\s<>"{}|\\^`]/.test(uri)) return `${uri} has characters a URI must percent-encode`
  return null
}

function locationProblems(loc: any, at: string): string[] {
  const p = loc?.physicalLocation
  if (!p?.artifactLocation) return [`${at}: no physicalLocation.artifactLocation`]
  const out: string[] = []
  const bad = uriProblem(p.artifactLocation.uri)
  if (bad) out.push(`${at}: ${bad}`)
  if (!Number.isInteger(p.region?.startLine) || p.region.startLine < 1) out.push(`${at}: no region.startLine of 1 or more`)
  return out
}

function ruleProblems(rule: any, at: string): string[] {
  const out: string[] = []
  if (!text(rule?.id)) out.push(`${at}: no id`)
  for (const field of ['shortDescription', 'fullDescription', 'help'] as const) {
    if (!text(rule?.[field]?.text)) out.push(`${at}: no ${field}.text`)
  }
  if (rule?.helpUri !== undefined && !URL.canParse(rule.helpUri)) out.push(`${at}: helpUri is not an absolute URI`)
  const level = rule?.defaultConfiguration?.level
  if (level !== undefined && !LEVELS.has(level)) out.push(`${at}: defaultConfiguration.level ${level}`)
  const props = rule?.properties ?? {}
  const tags = props.tags ?? []
  if (!Array.isArray(tags) || tags.some((t: unknown) => typeof t !== 'string')) out.push(`${at}: tags are not strings`)
  else if (tags.length > LIMITS.tags) out.push(`${at}: ${tags.length} tags, more than ${LIMITS.tags}`)
  else if (new Set(tags).size !== tags.length) out.push(`${at}: tags repeat`)
  if (props.precision !== undefined && !PRECISIONS.has(props.precision)) out.push(`${at}: precision ${props.precision}`)
  const sev = props['security-severity']
  if (sev !== undefined) {
    const n = Number(sev)
    if (typeof sev !== 'string' || !/^\d+(\.\d+)?$/.test(sev) || n < 0 || n > 10) out.push(`${at}: security-severity ${sev}`)
    if (!tags.includes('security')) out.push(`${at}: security-severity on a rule not tagged security`)
  }
  return out
}

function resultProblems(r: any, rules: any[], at: string): string[] {
  const out: string[] = []
  const ids = new Set(rules.map((x) => x?.id))
  if (!text(r?.ruleId) || !ids.has(r.ruleId)) out.push(`${at}: ruleId ${r?.ruleId} names no rule of the run`)
  if (r?.ruleIndex !== undefined && rules[r.ruleIndex]?.id !== r.ruleId) out.push(`${at}: ruleIndex points at another rule`)
  if (r?.level !== undefined && !LEVELS.has(r.level)) out.push(`${at}: level ${r.level}`)
  if (!text(r?.message?.text)) out.push(`${at}: no message.text`)
  const locations = r?.locations ?? []
  if (locations.length === 0) out.push(`${at}: no location`)
  if (locations.length > LIMITS.locations) out.push(`${at}: ${locations.length} locations`)
  for (const [i, l] of locations.entries()) out.push(...locationProblems(l, `${at}.locations[${i}]`))
  for (const [i, l] of (r?.relatedLocations ?? []).entries()) out.push(...locationProblems(l, `${at}.relatedLocations[${i}]`))
  const fp = r?.partialFingerprints
  if (!fp || Object.keys(fp).length === 0 || Object.values(fp).some((v) => !text(v))) out.push(`${at}: no partialFingerprints`)
  return out
}

/** Every way a SARIF log breaks a rule of GitHub code scanning; [] when it would be ingested and shown whole. */
export function githubSarifProblems(log: any): string[] {
  const out: string[] = []
  if (log?.version !== '2.1.0') out.push(`version ${log?.version}: code scanning reads 2.1.0 only`)
  const runs = log?.runs
  if (!Array.isArray(runs)) return [...out, 'no runs']
  if (runs.length > LIMITS.runs) out.push(`${runs.length} runs, more than ${LIMITS.runs}`)
  for (const [i, run] of (runs as any[]).entries()) {
    const at = `runs[${i}]`
    const driver = run?.tool?.driver
    if (!text(driver?.name)) out.push(`${at}: no tool.driver.name`)
    const rules: any[] = driver?.rules ?? []
    if (rules.length > LIMITS.rules) out.push(`${at}: ${rules.length} rules`)
    if (new Set(rules.map((r) => r?.id)).size !== rules.length) out.push(`${at}: rule ids repeat`)
    for (const [j, r] of rules.entries()) out.push(...ruleProblems(r, `${at}.rules[${j}]`))
    const results: any[] = run?.results ?? []
    if (results.length > LIMITS.results) out.push(`${at}: ${results.length} results`)
    for (const [j, r] of results.entries()) out.push(...resultProblems(r, rules, `${at}.results[${j}]`))
    if (run?.automationDetails !== undefined && !text(run.automationDetails.id)) out.push(`${at}: automationDetails without an id`)
  }
  return out
}
