/**
 * `POST /api/v1/students/<id>/enroll` on the fast path (index.ts).
 *
 * Only the plain case is answered here: a canonical UUID, a JSON body of a known small length
 * that is exactly `{"tier": <tier id>}`, a key admitted with the `students:write` scope and an
 * agreement in force. The write and its disclosure record are the route's own case
 * (cases/enroll.ts), and so are the body (the same schema's serializer) and the 404.
 *
 * Everything else goes to the router. Refusals go before the body is read, with the admission
 * verdict already taken. A body that is anything but the plain case goes after it is read, with
 * the bytes read here (hand-over.ts), so the router's answers (malformed JSON, an unknown field,
 * a missing tier) stay its own, word for word.
 */
import type { IncomingHttpHeaders } from 'node:http'
import fastJson from 'fast-json-stringify'
import { enrollStudent } from '../../cases/enroll.js'
import type { KeyRecord } from '../../domain/api-key.js'
import { requestIdAt } from '../../domain/request-id.js'
import { mayReachStudents } from '../../domain/student-reach.js'
import { TIER_IDS, type TierId } from '../../domain/tiers.js'
import type { Storage } from '../../storage/connection.js'
import { byteString } from '../byte-string.js'
import { studentNotFound } from '../student-not-found.js'
import { EnrollmentSchema } from '../schemas/students.js'
import { keyAccess, type StudentOutcome, studentUrl } from './student-answers.js'

/** The longest body read here: `{"tier":"innovator"}` is 20 bytes; longer ones go to the router unread. */
export const FAST_ENROLL_MAX_BODY = 256

const JSON_TYPES = new Set(['application/json', 'application/json; charset=utf-8'])
const TIERS: ReadonlySet<string> = new Set(TIER_IDS)

/** The student id of an exact enroll URL; else undefined. */
export const enrollStudentId = studentUrl('/enroll')

/**
 * Whether the fast path reads this request's body: announced as JSON, with a Content-Length
 * from 1 to FAST_ENROLL_MAX_BODY, not chunked and not waiting for "100 Continue". Node reads
 * exactly that many bytes as the body, so at most that many are ever held here.
 */
export function readsBody(headers: IncomingHttpHeaders): boolean {
  if (headers['transfer-encoding'] !== undefined || headers.expect !== undefined) return false
  const type = headers['content-type']
  if (type === undefined || !JSON_TYPES.has(type.toLowerCase())) return false
  const length = headers['content-length']
  if (length === undefined || !/^[1-9][0-9]{0,2}$/.test(length)) return false
  return Number(length) <= FAST_ENROLL_MAX_BODY
}

/**
 * The tier of a body that is exactly one JSON object with one member, `tier`, naming a tier;
 * undefined for anything else. Such a body is what the route's schema accepts, and no other
 * member (`__proto__`, `constructor`) can be in it.
 */
export function plainTier(body: Buffer): TierId | undefined {
  let parsed: unknown
  try {
    parsed = JSON.parse(body.toString('utf8'))
  } catch {
    return undefined
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return undefined
  const keys = Object.keys(parsed)
  if (keys.length !== 1 || keys[0] !== 'tier') return undefined
  const tier = (parsed as { tier: unknown }).tier
  return typeof tier === 'string' && TIERS.has(tier) ? (tier as TierId) : undefined
}

export interface EnrollAnswer {
  /** Whether the key may be answered here (otherwise the router answers, and records the refusal). */
  admits(key: KeyRecord, now: number): boolean
  /**
   * Writes and records; resolves to the answer once both are committed, or to undefined when
   * the router must answer instead (storage failed: nothing was written then).
   */
  answer(id: string, tier: TierId, key: KeyRecord, now: number): Promise<StudentOutcome>
}

export function fastEnroll(storage: Storage): EnrollAnswer {
  const serialize = fastJson(EnrollmentSchema)
  return {
    admits: (key, now) => mayReachStudents(key, 'students:write', now),
    answer(id, tier, key, now) {
      const requestId = requestIdAt(now)
      return enrollStudent(storage.writes, id, tier, keyAccess(key, requestId, now), now).then(
        (result): StudentOutcome => {
          if (result === undefined) return { requestId, problem: studentNotFound(id) }
          // The schema's serializer writes its three fields and nothing else of the result.
          return { requestId, body: byteString(serialize(result)) }
        },
        () => undefined,
      )
    },
  }
}
