/**
 * `GET /api/v1/students/<id>/progress` on the fast path (index.ts), where storage can read
 * synchronously (SQLite's read-only connection).
 *
 * Only the plain case is answered here: a canonical UUID, a key admitted with the
 * `students:read` scope and an agreement in force. The student lookup and the disclosure record
 * are the route's own case (cases/progress-read.ts), and so is the 404; the body is written by
 * progress-body.ts, the same bytes as the route's. Every other case (a refusal, which the router
 * records in the disclosure log; a storage failure) is handed to the router with the admission
 * verdict already taken, so the request is counted against the limits once.
 */
import { readStudentRows } from '../../cases/progress-read.js'
import type { KeyRecord } from '../../domain/api-key.js'
import { requestIdAt } from '../../domain/request-id.js'
import { mayReachStudents } from '../../domain/student-reach.js'
import type { CatalogState } from '../../services/catalog-state.js'
import type { Storage } from '../../storage/connection.js'
import type { CatalogRepresentations } from '../catalog-representations.js'
import { studentNotFound } from '../student-not-found.js'
import { progressRenderer } from './progress-body.js'
import { keyAccess, type StudentOutcome, studentUrl } from './student-answers.js'

/** The student id of an exact progress URL; else undefined. */
export const progressStudentId = studentUrl('/progress')

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
  const render = progressRenderer()
  return {
    admits: (key, now) => mayReachStudents(key, 'students:read', now),
    answer(id, key, now) {
      const requestId = requestIdAt(now)
      const context = keyAccess(key, requestId, now)
      return readStudentRows(storage.db, storage.writes, id, context, storage.reader).then(
        (student): StudentOutcome => {
          if (student === undefined) return { requestId, problem: studentNotFound(id) }
          try {
            return { requestId, body: render(id, student, catalog.current) }
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
