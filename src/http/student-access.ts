import type { FastifyRequest } from 'fastify'
import type { Clock } from '../clock.js'
import type { StudentAccess } from '../storage/student-repository.js'
import { principalOf } from './api-v1.js'

/** Who is asking for students' data on this request: the disclosure context and the students the key may reach. */
export function studentAccess(request: FastifyRequest, clock: Clock): StudentAccess {
  const principal = principalOf(request)
  return {
    at: clock.now(),
    requestId: request.id,
    keyId: principal.keyId,
    organisationId: principal.organisation.id,
    sandbox: principal.sandbox,
  }
}
