/** Who is asking for a student's data on a request the router answers. */
import type { FastifyRequest } from 'fastify'
import type { Clock } from '../clock.js'
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
