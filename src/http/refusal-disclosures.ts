/**
 * Every request that names a student and is refused after its key was identified is written
 * to the disclosure log with why (scope, agreement, rate limit, suspension): the operator can
 * then see every attempt on a child's data, not only the successful ones. Refusals before
 * identification (no key, a bad key) have no one to attribute and are not recorded here.
 */
import type { FastifyRequest } from 'fastify'
import type { Clock } from '../clock.js'
import type { ProblemCode } from '../errors.js'
import type { KeyRecord } from '../domain/api-key.js'
import { type DisclosureAction, type DisclosureOutcome, recordDisclosure } from '../storage/disclosure-log.js'
import type { WriteQueue } from '../storage/write-queue.js'
import { UUID } from '../domain/uuid.js'

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Set on routes that name a student in `:id`: what a call does to that student's data. */
    disclosure?: DisclosureAction
  }
}

const OUTCOMES: Partial<Record<ProblemCode, DisclosureOutcome>> = {
  insufficient_scope: 'denied_scope',
  agreement_required: 'denied_agreement',
  rate_limited: 'denied_rate_limit',
  organisation_suspended: 'denied_suspended',
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
  const outcome = OUTCOMES[code]
  const studentId = (request.params as { id?: unknown } | undefined)?.id
  if (action === undefined || outcome === undefined || typeof studentId !== 'string' || !UUID.test(studentId)) return
  const context = { at: deps.clock.now(), requestId: request.id, keyId: key.keyId, organisationId: key.organisation.id }
  await deps.writes.statement((db) => recordDisclosure(db, context, studentId.toLowerCase(), action, outcome))
}
