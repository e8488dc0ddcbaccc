/**
 * Students are stored by first name only. This check keeps other personal data out at import:
 * one word (a space would let a surname through: "Ada Lovelace"), no e-mail addresses, no
 * digits, no long strings. Compound first names are written with a hyphen ("Anne-Marie") and
 * apostrophes are allowed ("D'Andre").
 */
const FIRST_NAME = /^\p{L}[\p{L}\p{M}'’-]*$/u
const MAX_LENGTH = 40

export function firstNameProblem(value: unknown): string | null {
  if (typeof value !== 'string') return 'must be a string'
  const name = value.normalize('NFC')
  if (name.trim() !== name || name === '') return 'must not be empty or have leading or trailing spaces'
  if (name.length > MAX_LENGTH) return `must be at most ${MAX_LENGTH} characters`
  if (!FIRST_NAME.test(name)) {
    return (
      'must be a first name only: one word of letters, hyphens and apostrophes ' +
      '(write compound names as Anne-Marie); no surname, digits or e-mail address'
    )
  }
  return null
}
