/**
 * Checks of the roster values the service keeps besides first names: sourcedIds, and schools'
 * names and identifiers. They are shown later in the dashboard and in CSV exports, so a value a
 * spreadsheet would run as a formula is refused here rather than escaped everywhere after.
 * Messages describe the value and never quote it.
 */

const MAX_ID_LENGTH = 255
const MAX_NAME_LENGTH = 255
const CONTROL = /\p{Cc}/u

/** Characters that make a spreadsheet read a cell as a formula (OWASP's list; tab and CR are control characters). */
function startsFormula(value: string): boolean {
  const first = value.charAt(0)
  return first === '=' || first === '+' || first === '-' || first === '@'
}

export function idProblem(value: string): string | null {
  if (value === '') return 'is required'
  if (value.trim() !== value) return 'must not start or end with a space'
  if (value.length > MAX_ID_LENGTH) return `must be at most ${MAX_ID_LENGTH} characters`
  if (CONTROL.test(value)) return 'must not hold control characters'
  if (startsFormula(value)) return 'must not start with =, +, - or @, which a spreadsheet would run as a formula'
  return null
}

/** A school's name or identifier, checked as the trimmed text kept. */
export function labelProblem(value: string): string | null {
  if (value === '') return 'is required'
  if (value.length > MAX_NAME_LENGTH) return `must be at most ${MAX_NAME_LENGTH} characters`
  if (CONTROL.test(value)) return 'must not hold control characters or line breaks'
  if (startsFormula(value)) return 'must not start with =, +, - or @, which a spreadsheet would run as a formula'
  return null
}

/**
 * A copy of a string that shares no memory with the text it was cut from. A field read from a
 * chunk of the file may be a slice that keeps the whole chunk alive, so every string the reader
 * keeps is copied, or a large roster would hold the whole file it came from.
 */
export function detach(value: string): string {
  return Buffer.from(value, 'utf8').toString('utf8')
}

/** One copy of each distinct string: ids of schools and first names repeat across students. */
export class StringPool {
  readonly #strings = new Map<string, string>()

  get(value: string): string {
    let kept = this.#strings.get(value)
    if (kept === undefined) {
      kept = detach(value)
      this.#strings.set(kept, kept)
    }
    return kept
  }
}
