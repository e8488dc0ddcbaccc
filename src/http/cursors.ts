/**
 * Opaque cursors for the roster and the change feed. A cursor is base64url of a version byte,
 * then `<kind>.<position>` padded to a fixed length and sealed with AES-256-GCM (a random IV,
 * the caller's organisation as associated data) under a key every instance shares (the
 * settings table, created once and never rotated, so that stored cursors keep working).
 *
 * Sealed, because the feed's position is the service-wide change counter: in clear, a cursor
 * fetched now and again later told any key how much every other organisation had written in
 * between. Padded and with a fresh IV each time, so that neither the length nor a repeat of the
 * same position says anything either (should a random IV ever repeat, the worst it allows is a
 * forged cursor, which reaches no further than the caller's own data, as every position does).
 * Bound to the organisation, so that a cursor is no use to anyone it was not given to (another
 * organisation's is refused like a garbled one).
 *
 * Cursors of the first form (`<kind>.<position>.<check>` in clear, `check` the first 8 hex
 * digits of the SHA-256 of `<kind>.<position>`) are still read, marked `legacy`: anyone can
 * write one, so whoever reads a legacy position must hold it within what it could have held.
 */
import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto'
import { ProblemError } from '../errors.js'

export type CursorKind = 'students' | 'changes'

const VERSION = 1
const IV_BYTES = 12
const TAG_BYTES = 16
/** The longest body, `students.` and a UUID; every body is padded to it. */
const BODY_BYTES = 45
const SEALED_BYTES = 1 + IV_BYTES + BODY_BYTES + TAG_BYTES

const BASE64URL = /^[A-Za-z0-9_-]+$/

function check(body: string): string {
  return createHash('sha256').update(body).digest('hex').slice(0, 8)
}

function associatedData(organisationId: string): Buffer {
  return Buffer.from(`${VERSION}:${organisationId}`)
}

export interface DecodedCursor {
  position: string
  /** A cursor of the first form, in clear: its position may have been written by anyone. */
  legacy: boolean
}

export class Cursors {
  readonly #key: Buffer

  /** `key`: 32 bytes, the same on every instance. */
  constructor(key: Buffer) {
    if (key.length !== 32) throw new RangeError('the cursor key must be 32 bytes')
    this.#key = key
  }

  encode(kind: CursorKind, organisationId: string, position: string): string {
    const body = `${kind}.${position}`
    if (Buffer.byteLength(body) > BODY_BYTES) throw new RangeError(`cursor position too long: ${position}`)
    const iv = randomBytes(IV_BYTES)
    const cipher = createCipheriv('aes-256-gcm', this.#key, iv, { authTagLength: TAG_BYTES })
    cipher.setAAD(associatedData(organisationId))
    const sealed = Buffer.concat([cipher.update(body.padEnd(BODY_BYTES, ' '), 'utf8'), cipher.final()])
    return Buffer.concat([Buffer.of(VERSION), iv, sealed, cipher.getAuthTag()]).toString('base64url')
  }

  /**
   * The position a cursor of `kind` given to `organisationId` holds; throws a 400 problem
   * naming the query parameter when the text is not such a cursor, or `valid` refuses its
   * position.
   */
  decode(
    kind: CursorKind,
    organisationId: string,
    text: string,
    valid: (position: string) => boolean,
    restart: string,
  ): DecodedCursor {
    const refuse = (why: string): never => {
      const detail = `${why} Send the \`next\` value of the previous response unchanged, or ${restart}.`
      throw new ProblemError('invalid_request', `The request is invalid: query cursor: ${detail}`, {
        errors: [{ in: 'query', field: 'cursor', detail }],
      })
    }
    const raw = BASE64URL.test(text) ? Buffer.from(text, 'base64url') : Buffer.alloc(0)
    const legacy = raw[0] !== VERSION
    const body = legacy ? legacyBody(raw) : this.#open(raw, organisationId)
    const garbled =
      'This is not a cursor this API gave out to your organisation (it may have been cut short or changed).'
    if (body === undefined) return refuse(garbled)
    const [found, ...rest] = body.split('.')
    const position = rest.join('.')
    if (found !== kind)
      return refuse(`This cursor belongs to the ${found === 'changes' ? 'change feed' : 'student list'}.`)
    if (!valid(position)) return refuse(garbled)
    return { position, legacy }
  }

  /** The body of a sealed cursor, or undefined when it was not sealed with this key for this organisation. */
  #open(raw: Buffer, organisationId: string): string | undefined {
    if (raw.length !== SEALED_BYTES) return undefined
    try {
      const decipher = createDecipheriv('aes-256-gcm', this.#key, raw.subarray(1, 1 + IV_BYTES), {
        authTagLength: TAG_BYTES,
      })
      decipher.setAAD(associatedData(organisationId))
      decipher.setAuthTag(raw.subarray(SEALED_BYTES - TAG_BYTES))
      const body = Buffer.concat([
        decipher.update(raw.subarray(1 + IV_BYTES, SEALED_BYTES - TAG_BYTES)),
        decipher.final(),
      ])
      return body.toString('utf8').trimEnd()
    } catch {
      return undefined
    }
  }
}

/** The body of a cursor of the first form, when its check matches. */
function legacyBody(raw: Buffer): string | undefined {
  const decoded = raw.toString('utf8')
  const last = decoded.lastIndexOf('.')
  const body = decoded.slice(0, last)
  return last !== -1 && check(body) === decoded.slice(last + 1) ? body : undefined
}
