// The shape of a JSON text, capped before it is parsed and before any schema library sees it. Parsing and
// validating cost time per key (JSON.parse of a 1 MB object of 70,000 keys alone takes tens of ms of the
// only thread; zod in the MCP SDK and TypeBox then spend more, and build an error per offending key), while
// the same megabyte as one string costs almost nothing. One pass over the characters, skipping the insides
// of strings, counts what the text holds and stops at the first limit it passes. It does not validate: a
// text within the limits is parsed next, which refuses what is not JSON.

export interface JsonShapeLimits {
  /** Nesting of objects and arrays. */
  depth: number
  /** Keys of one object. */
  keysPerObject: number
  /** Items of one array. */
  itemsPerArray: number
  /** Objects, arrays and values in all (counted as 1 + separators + containers: an empty one counts 1 more). */
  values: number
}

/**
 * Far above any MCP message a client sends (an initialize, a tools/call with its arguments, a batch of a
 * few), far below what makes parsing and validation slow.
 */
export const MCP_JSON_SHAPE: JsonShapeLimits = { depth: 32, keysPerObject: 256, itemsPerArray: 1_000, values: 5_000 }

const QUOTE = 34
const BACKSLASH = 92
const COMMA = 44
const OPEN_OBJECT = 123
const CLOSE_OBJECT = 125
const OPEN_ARRAY = 91
const CLOSE_ARRAY = 93

/** Null when the JSON text is within `limits`, else what is over, in words a client can act on. */
export function jsonShapeProblem(text: string, limits: JsonShapeLimits): string | null {
  // Per open container: true for an object, and how many separators it has had.
  const isObject: boolean[] = []
  const separators: number[] = []
  let values = 1
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i)
    if (c === QUOTE) {
      i = endOfString(text, i)
      continue
    }
    if (c === OPEN_OBJECT || c === OPEN_ARRAY) {
      if (isObject.length >= limits.depth) return `the message nests objects and arrays more than ${limits.depth} deep`
      isObject.push(c === OPEN_OBJECT)
      separators.push(0)
      values++
    } else if (c === CLOSE_OBJECT || c === CLOSE_ARRAY) {
      isObject.pop()
      separators.pop()
    } else if (c === COMMA && separators.length > 0) {
      const top = separators.length - 1
      const items = ++separators[top]! + 1
      if (isObject[top] && items > limits.keysPerObject) return `an object holds more than ${limits.keysPerObject} keys`
      if (!isObject[top] && items > limits.itemsPerArray) return `an array holds more than ${limits.itemsPerArray} items`
      values++
    }
    if (values > limits.values) return `the message holds more than ${limits.values} JSON values`
  }
  return null
}

/** The index of the quote that closes the string opening at `start` (or the end of the text). */
function endOfString(text: string, start: number): number {
  let from = start + 1
  for (;;) {
    const quote = text.indexOf('"', from)
    if (quote < 0) return text.length
    // Escaped when an odd number of backslashes stand right before it.
    let slashes = 0
    while (text.charCodeAt(quote - 1 - slashes) === BACKSLASH) slashes++
    if (slashes % 2 === 0) return quote
    from = quote + 1
  }
}
