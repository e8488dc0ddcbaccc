/** The one answer, on both request paths, for a student the key's organisation cannot see. */
import type { Problem } from '../errors.js'

/** Exactly like an unknown id: the caller cannot tell whether the student exists. */
export function studentNotFound(id: string): Problem {
  return { code: 'student_not_found', detail: `No student with id ${id} is linked to your organisation.` }
}
