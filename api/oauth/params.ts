// Request parameters of the OAuth endpoints. RFC 6749 3.1 and 3.2: a parameter must not appear twice.

/**
 * The names of the parameters that appear more than once, in the order they first repeat. One pass over
 * the parameters: a form of many distinct keys costs no more than reading it (asking getAll for each key
 * made it quadratic).
 */
export function repeatedParams(params: URLSearchParams): string[] {
  const seen = new Set<string>()
  const repeated = new Set<string>()
  for (const name of params.keys()) {
    if (seen.has(name)) repeated.add(name)
    else seen.add(name)
  }
  return [...repeated]
}
