/**
 * Opaque cursors for the roster and the change feed: base64url of `<kind>.<position>.<check>`,
 * where `check` is the first 8 hex digits of the SHA-256 of `<kind>.<position>`.
 *
 * Opaque, so that partners store and send them back rather than build them, and the position
 * can change form without breaking anyone. Checked, so that a cursor cut short or mistyped is
 * refused with a message instead of silently starting somewhere else. Not signed with a
 * server secret, on purpose: a partner stores a feed cursor for as long as it syncs, and a
 * rotated secret would invalidate every stored cursor. Forging one gains nothing: a cursor
 * only says where to continue within the caller's own organisation's data.
 */
import { createHash } from 'node:crypto'
import { ProblemError } from '../errors.js'

export type CursorKind = 'students' | 'changes'

function check(body: string): string {
  return createHash('sha256').update(body).digest('hex').slice(0, 8)
}

export function encodeCursor(kind: CursorKind, position: string): string {
  const body = `${kind}.${position}`
  return Buffer.from(`${body}.${check(body)}`).toString('base64url')
}

const BASE64URL = /^[A-Za-z0-9_-]+$/

/**
 * The position a cursor of `kind` holds; throws a 400 problem naming the query parameter when
 * the text is not such a cursor, or `valid` refuses its position.
 */
export function decodeCursor(
  kind: CursorKind,
  text: string,
  valid: (position: string) => boolean,
  restart: string,
): string {
  const refuse = (why: string): never => {
    const detail = `${why} Send the \`next\` value of the previous response unchanged, or ${restart}.`
    throw new ProblemError('invalid_request', `The request is invalid: query cursor: ${detail}`, {
      errors: [{ in: 'query', field: 'cursor', detail }],
    })
  }
  const decoded = BASE64URL.test(text) ? Buffer.from(text, 'base64url').toString('utf8') : ''
  const last = decoded.lastIndexOf('.')
  const body = decoded.slice(0, last)
  const garbled = 'This is not a cursor this API gave out (it may have been cut short or changed).'
  if (last === -1 || check(body) !== decoded.slice(last + 1)) return refuse(garbled)
  const [found, ...rest] = body.split('.')
  const position = rest.join('.')
  if (found !== kind)
    return refuse(`This cursor belongs to the ${found === 'changes' ? 'change feed' : 'student list'}.`)
  if (!valid(position)) return refuse(garbled)
  return position
}
