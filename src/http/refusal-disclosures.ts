/**
 * Every request that names a student and is refused after its key was identified is written
 * to the disclosure log with why (cases/refused-access.ts); this module finds the student and
 * what the route does to their data.
 */
import type { FastifyRequest } from 'fastify'
import type { Clock } from '../clock.js'
import type { ProblemCode } from '../errors.js'
import type { KeyRecord } from '../domain/api-key.js'
import { recordRefusedAccess, refusalOutcome } from '../cases/refused-access.js'
import type { DisclosureAction } from '../storage/disclosure-log.js'
import type { WriteQueue } from '../storage/write-queue.js'
import { UUID } from '../domain/uuid.js'

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Set on routes that name a student in `:id`: what a call does to that student's data. */
    disclosure?: DisclosureAction
  }
}

/**
 * Records the refusal `code` of `key`'s request if the route names a student; resolves once
 * the row is committed (the answer waits for it, as it does for disclosures).
 */
export async function recordRefusal(
  request: FastifyRequest,
  key: KeyRecord,
  code: ProblemCode,
  deps: { writes: WriteQueue; clock: Clock },
): Promise<void> {
  const action = request.routeOptions.config.disclosure
  const outcome = refusalOutcome(code)
  const studentId = (request.params as { id?: unknown } | undefined)?.id
  if (action === undefined || outcome === undefined || typeof studentId !== 'string' || !UUID.test(studentId)) return
  const context = { at: deps.clock.now(), requestId: request.id, keyId: key.keyId, organisationId: key.organisation.id }
  await recordRefusedAccess(deps.writes, context, studentId.toLowerCase(), action, outcome)
}
