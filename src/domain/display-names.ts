/**
 * Names people type for things the operator sees in lists and menus (a school, a share's label):
 * short, on one line, and without control characters, which would let a name forge lines in a
 * terminal or a log.
 */

/** What is wrong with `value` as a name of at most `max` characters, or null; check it trimmed. */
export function displayNameProblem(value: string, max = 120): string | null {
  if (value === '') return 'is required'
  if (value.length > max) return `must be at most ${max} characters (got ${value.length})`
  if (/\p{Cc}/u.test(value)) return 'must be one line of printable characters'
  return null
}
