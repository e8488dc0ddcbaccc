/** What the router's student routes (and the fast path's 404) need about a request for a student's data. */
import type { FastifyRequest } from 'fastify'
import type { Clock } from '../clock.js'
import type { Problem } from '../errors.js'
import type { StudentAccess } from '../storage/student-repository.js'
import { principalOf } from './access-control.js'

/** Who is asking for students' data on this request: the disclosure context and the students the key may reach. */
export function studentAccess(request: FastifyRequest, clock: Clock): StudentAccess {
  const key = principalOf(request)
  return {
    at: clock.now(),
    requestId: request.id,
    keyId: key.keyId,
    organisationId: key.organisation.id,
    sandbox: key.sandbox,
  }
}

/** The answer for a student the key's organisation cannot see, exactly like an unknown id. */
export function studentNotFound(id: string): Problem {
  return { code: 'student_not_found', detail: `No student with id ${id} is linked to your organisation.` }
}
