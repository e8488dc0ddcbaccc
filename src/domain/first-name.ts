/**
 * Students are stored by first name only. This check keeps other personal data out at import:
 * no surnames after a space-separated initial, no e-mail addresses, no digits, no long strings.
 * Compound first names ("Mary-Jane", "Anne Marie", "D'Andre") are allowed.
 */
const FIRST_NAME = /^\p{L}[\p{L}\p{M}'’-]*(?: \p{L}[\p{L}\p{M}'’-]*)?$/u
const MAX_LENGTH = 40

export function firstNameProblem(value: unknown): string | null {
  if (typeof value !== 'string') return 'must be a string'
  const name = value.normalize('NFC')
  if (name.trim() !== name || name === '') return 'must not be empty or have leading or trailing spaces'
  if (name.length > MAX_LENGTH) return `must be at most ${MAX_LENGTH} characters`
  if (!FIRST_NAME.test(name)) {
    return 'must be a first name only: letters, hyphens and apostrophes, at most two words, no digits, e-mail addresses or other data'
  }
  return null
}
