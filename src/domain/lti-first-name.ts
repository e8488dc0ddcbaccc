/**
 * The first name an LTI launch gives a student: `given_name` under the first-name rule
 * (domain/first-name.ts), else its first word when that passes, else "Student" and a short
 * suffix derived from `sub`, the same at every launch. Never `name`, which holds the surname too.
 */
import { createHash } from 'node:crypto'
import { firstNameProblem } from './first-name.js'

const LETTERS = 'abcdefghijklmnopqrstuvwxyz'

export function ltiFirstName(givenName: unknown, sub: string): string {
  if (typeof givenName === 'string') {
    const name = givenName.normalize('NFC').trim()
    if (firstNameProblem(name) === null) return name
    const first = name.split(/\s+/u)[0] ?? ''
    if (firstNameProblem(first) === null) return first
  }
  return placeholderName(sub)
}

/** "Student-Kqxw": letters only, as a first name must be; four letters tell a class's apart. */
export function placeholderName(sub: string): string {
  const digest = createHash('sha256').update(sub).digest()
  const suffix = Array.from(digest.subarray(0, 4), (byte) => LETTERS[byte % 26]).join('')
  return `Student-${suffix[0]!.toUpperCase()}${suffix.slice(1)}`
}
