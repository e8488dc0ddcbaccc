/** What both request paths share about a request for a student's data. */
import type { FastifyRequest } from 'fastify'
import type { Clock } from '../clock.js'
import type { KeyRecord } from '../domain/api-key.js'
import type { Problem } from '../errors.js'
import type { StudentAccess } from '../storage/student-repository.js'
import { principalOf } from './access-control.js'

/** Who is asking for students' data on this request: the disclosure context and the students the key may reach. */
export function studentAccess(request: FastifyRequest, clock: Clock): StudentAccess {
  return keyAccess(principalOf(request), request.id, clock.now())
}

/** The same for a request the fast path answers: the key it admitted, under a request id of its own. */
export function keyAccess(key: KeyRecord, requestId: string, at: number): StudentAccess {
  return { at, requestId, keyId: key.keyId, organisationId: key.organisation.id, sandbox: key.sandbox }
}

/** The answer for a student the key's organisation cannot see, exactly like an unknown id. */
export function studentNotFound(id: string): Problem {
  return { code: 'student_not_found', detail: `No student with id ${id} is linked to your organisation.` }
}
