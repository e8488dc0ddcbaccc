import type { FastifyRequest } from 'fastify'
import type { Clock } from '../clock.js'
import type { KeyRecord } from '../domain/api-key.js'
import type { StudentAccess } from '../storage/student-repository.js'
import { principalOf } from './api-v1.js'

/** Who is asking for students' data on this request: the disclosure context and the students the key may reach. */
export function studentAccess(request: FastifyRequest, clock: Clock): StudentAccess {
  return keyAccess(principalOf(request), request.id, clock.now())
}

/** The same for a request the fast path answers: the key it admitted, under a request id of its own. */
export function keyAccess(key: KeyRecord, requestId: string, at: number): StudentAccess {
  return { at, requestId, keyId: key.keyId, organisationId: key.organisation.id, sandbox: key.sandbox }
}
