// How much text regular expressions were run over, for tests that bound the work of a pure function
// instead of timing it (speed is measured in bench/). Every regex method (test, match, matchAll, replace,
// split, search) calls RegExp.prototype.exec (ECMA-262 RegExpExec), so wrapping exec sees them all.
//
// What counts is the distance each call scanned: from where it started (lastIndex for a global or sticky
// regex, else 0) to the end of its match, or to the end of the text when it failed. A loop over the
// matches of a global regex scans its text once; a check that runs a regex over a whole body once per
// line or per match scans it again each time, and its count grows with the square of the body. Time spent
// backtracking inside one call is not counted: the bench (bench/check-traps.ts) times that.

export interface RegexWork<T> {
  value: T
  /** Characters scanned by all regex calls made while fn ran. */
  scanned: number
  /** Regex calls made while fn ran. */
  calls: number
}

export function countRegexWork<T>(fn: () => T): RegexWork<T> {
  const exec = RegExp.prototype.exec
  let scanned = 0
  let calls = 0
  RegExp.prototype.exec = function (this: RegExp, input: string) {
    const text = String(input)
    const start = this.global || this.sticky ? this.lastIndex : 0
    const m = exec.call(this, text)
    calls++
    scanned += m ? m.index + m[0].length - start : this.sticky ? 1 : Math.max(0, text.length - start)
    return m
  }
  try {
    return { value: fn(), scanned, calls }
  } finally {
    RegExp.prototype.exec = exec
  }
}
