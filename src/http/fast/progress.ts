/**
 * `GET /api/v1/students/<id>/progress` on the fast path (index.ts), where storage can read
 * synchronously (SQLite's read-only connection).
 *
 * Only the plain case is answered here: a canonical UUID, a key admitted with the
 * `students:read` scope and an agreement in force. The student lookup and the disclosure record
 * are the route's own (`readStudentRows`), and so is the 404. The body is the route's too:
 * written straight from plain rows (progress-body.ts, the same bytes), else by the same
 * schema's serializer over `progressView`. Every other case (a refusal, which the router records in
 * the disclosure log; a storage failure) is handed to the router with the admission verdict
 * already taken, so the request is counted against the limits once.
 */
import { randomUUID } from 'node:crypto'
import fastJson from 'fast-json-stringify'
import type { KeyRecord } from '../../domain/api-key.js'
import { progressView } from '../../domain/progress.js'
import { UUID } from '../../domain/uuid.js'
import type { CatalogState } from '../../services/catalog-state.js'
import type { Storage } from '../../storage/connection.js'
import { progressOfRows, readStudentRows } from '../../storage/student-repository.js'
import { mayReachStudents } from '../access-control.js'
import { API_PREFIX } from '../api-prefix.js'
import type { CatalogRepresentations } from '../catalog-representations.js'
import { progressBody } from '../progress-body.js'
import { type ByteString, byteString } from '../byte-string.js'
import { keyAccess, studentNotFound } from '../student-access.js'
import { ProgressEntrySchema, StudentProgressSchema } from '../schemas/students.js'
import type { Problem } from '../../errors.js'

const PREFIX = `${API_PREFIX}/students/`
const ID_LENGTH = 36

/**
 * The parser of one exact student URL, `/api/v1/students/<id><suffix>`: the id (a canonical
 * UUID, lower-cased) of a URL with nothing else, no query and no encoding; else undefined.
 */
export function studentUrl(suffix: string): (url: string) => string | undefined {
  const length = PREFIX.length + ID_LENGTH + suffix.length
  return (url) => {
    if (url.length !== length || !url.startsWith(PREFIX) || !url.endsWith(suffix)) return undefined
    const id = url.slice(PREFIX.length, PREFIX.length + ID_LENGTH)
    return UUID.test(id) ? id.toLowerCase() : undefined
  }
}

/** The student id of an exact progress URL; else undefined. */
export const progressStudentId = studentUrl('/progress')

/** The answer to a student request: a body or a problem (under the request id both carry); undefined: the router's. */
export type StudentOutcome =
  | { requestId: string; body: ByteString }
  | { requestId: string; problem: Problem }
  | undefined

export interface ProgressAnswer {
  /** Whether the key may be answered here (otherwise the router answers, and records the refusal). */
  admits(key: KeyRecord, now: number): boolean
  /**
   * Reads and records; resolves to the answer once the disclosure is committed, or to
   * undefined when the router must answer instead (storage failed: nothing was recorded then).
   */
  answer(id: string, key: KeyRecord, now: number): Promise<StudentOutcome>
}

export function fastProgress(
  storage: Storage,
  catalog: CatalogState<CatalogRepresentations>,
): ProgressAnswer | undefined {
  if (storage.reader === undefined) return undefined
  const serialize = fastJson(StudentProgressSchema, { schema: { ProgressEntry: ProgressEntrySchema } })
  return {
    admits: (key, now) => mayReachStudents(key, 'students:read', now),
    answer(id, key, now) {
      const requestId = randomUUID()
      const context = keyAccess(key, requestId, now)
      return readStudentRows(storage.db, storage.writes, id, context, storage.reader).then(
        (student): StudentOutcome => {
          if (student === undefined) return { requestId, problem: studentNotFound(id) }
          try {
            const index = catalog.current
            const body =
              progressBody(id, student, index) ??
              byteString(serialize(progressView(progressOfRows(id, student), index)))
            return { requestId, body }
          } catch {
            // The router answers (and logs) whatever this was. Its read is recorded again, which
            // over-records rather than loses a disclosure.
            return undefined
          }
        },
        () => undefined,
      )
    },
  }
}
