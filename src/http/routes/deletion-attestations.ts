/**
 * POST /api/v1/deletion-attestations: a partner attests, with a live key, that it deleted the data
 * shared under its ended agreement (cases/deletion-attestation.ts).
 *
 * Its access check is its own. Student endpoints need an agreement in force, and this one exists
 * for organisations that have none any more, so it needs neither an agreement nor a student; it
 * does need a key that could have received students' data (either student scope): a catalog-only
 * key, which may sit in a less guarded place, cannot make a statement for the organisation. A
 * suspended organisation's keys are refused before (admission.ts); it attests in the dashboard.
 */
import type { FastifyReply, FastifyRequest } from 'fastify'
import type { Clock } from '../../clock.js'
import { hasScope } from '../../domain/scopes.js'
import { type Problem, ProblemError } from '../../errors.js'
import { endedAgreementDocument } from '../../cases/ended-agreement.js'
import type { AgreementEnd } from '../../storage/agreement-end-repository.js'
import type { Storage } from '../../storage/connection.js'
import { type AttestationOutcome, attestDeletion } from '../../cases/deletion-attestation.js'
import { principalOf } from '../access-control.js'
import { AUTH_FAILURES, REALM } from '../admission.js'
import type { TypedApp } from '../app-types.js'
import { sendProblem } from '../problem-responses.js'
import { AttestationRequestSchema, type DeletionAttestationBody } from '../schemas/agreements.js'
import { AUTHENTICATED_PROBLEMS, jsonResponse, problemResponses } from '../schemas/responses.js'

const PROBLEMS = [
  ...AUTHENTICATED_PROBLEMS,
  'insufficient_scope',
  'nothing_to_attest',
  'already_attested',
  'malformed_json',
  'payload_too_large',
  'unsupported_media_type',
  'storage_unavailable',
] as const

const NO_STUDENT_SCOPE: Problem = {
  code: 'insufficient_scope',
  detail:
    'Attesting a deletion needs a live key with a student scope (students:read or students:write): ' +
    'a key that could have received the data.',
  headers: { 'www-authenticate': `Bearer realm="${REALM}", error="insufficient_scope", scope="students:read"` },
}

async function studentScope(request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply | undefined> {
  const record = request.principal
  if (record === null) return sendProblem(request, reply, AUTH_FAILURES.api_key_missing)
  if (hasScope(record.scopes, 'students:read') || hasScope(record.scopes, 'students:write')) return undefined
  return sendProblem(request, reply, NO_STUDENT_SCOPE)
}

function attestationBody(end: AgreementEnd): DeletionAttestationBody {
  const { coverage, ...document } = endedAgreementDocument(end)
  return {
    ...document,
    // The API's document keeps the fields it has always had: `until` (now, or when the links ended) is not one.
    coverage: { since: coverage.since, linked: coverage.linked, unlinked: coverage.unlinked, erased: coverage.erased },
    attestedAt: end.attestation!.attestedAt,
    keyId: end.attestation!.keyId!,
  }
}

function attestedBy(end: AgreementEnd): string {
  const a = end.attestation!
  return a.keyId !== null
    ? `with key ${a.keyPrefix ?? a.keyId}\u2026 ("${a.keyName ?? ''}")`
    : `in the dashboard by ${a.accountEmail ?? 'a partner account'}`
}

/** The route's answer to each outcome of the attestation. */
function answer(reply: FastifyReply, result: AttestationOutcome, agreementId: string | undefined) {
  switch (result.outcome) {
    case 'attested':
      return reply.code(201).send(attestationBody(result.end))
    case 'already':
      throw new ProblemError(
        'already_attested',
        `The deletion under agreement ${result.end.agreement.document_ref} (${result.end.agreement.id}) was ` +
          `attested at ${result.end.attestation!.attestedAt} ${attestedBy(result.end)}; it is recorded once.`,
      )
    case 'ambiguous': {
      const ids = result.awaiting.map((end) => `${end.agreement.id} (${end.agreement.document_ref})`).join(', ')
      const detail = `several ended agreements await an attestation: name one of ${ids}`
      throw new ProblemError('invalid_request', `The request is invalid: body /agreementId: ${detail}.`, {
        errors: [{ in: 'body', field: '/agreementId', detail }],
      })
    }
    case 'nothing':
      throw new ProblemError(
        'nothing_to_attest',
        agreementId !== undefined
          ? `Your organisation has no ended agreement ${agreementId} awaiting a deletion attestation ` +
              '(none with this id has ended, or a newer agreement is in force).'
          : 'No ended agreement of your organisation awaits a deletion attestation: none has ended, or a ' +
              'newer agreement is in force, under which the data is still shared.',
      )
  }
}

export function deletionAttestationRoutes(app: TypedApp, deps: { storage: Storage; clock: Clock }): void {
  const { storage, clock } = deps
  app.post(
    '/deletion-attestations',
    {
      onRequest: studentScope,
      // No body at all is the same as `{}`: nothing to name.
      preValidation: async (request) => {
        request.body ??= {}
      },
      schema: {
        operationId: 'attestDeletion',
        summary: 'Attest that you deleted the data of an ended agreement',
        description:
          'Once a data-sharing agreement has ended (and no newer one is in force), your organisation must delete ' +
          'what it received under it within the disposition period: about every student shared with it under the ' +
          'agreement, those unlinked or erased meanwhile too. Then its links to the students still linked end, each ' +
          'with a `student.unlinked` notice. This records, with the time and the key, that you did: the ' +
          "district's certificate of deletion shows it. Works although student endpoints refuse your keys (their " +
          'agreement has ended); needs a live key with `students:read` or `students:write`. Send `{}` (or no ' +
          'body) when one agreement awaits an attestation, or name it with `agreementId`. An agreement is ' +
          'attested once: a second attestation answers 409, as does the slower of two sent at once.',
        tags: ['Agreements'],
        // The reference's example runs with a sandbox key, whose sandbox never has an agreement.
        'x-example-answer':
          'HTTP/1.1 404 Not Found (nothing_to_attest) until an agreement of your organisation has ended; ' +
          'then 201 Created',
        security: [{ bearerAuth: ['students:read'] }, { bearerAuth: ['students:write'] }],
        querystring: { type: 'object', additionalProperties: false, properties: {} },
        body: AttestationRequestSchema,
        response: {
          201: jsonResponse('DeletionAttestation', 'The attestation recorded.'),
          ...problemResponses(PROBLEMS),
        },
      },
    },
    async (request, reply) => {
      const key = principalOf(request)
      if (key.sandbox)
        throw new ProblemError(
          'nothing_to_attest',
          "A test key's sandbox has no data-sharing agreement, so there is nothing to attest: use a live key.",
        )
      const { agreementId } = request.body
      const result = await attestDeletion(
        storage.db,
        {
          organisationId: key.organisation.id,
          ...(agreementId === undefined ? {} : { agreementId: agreementId.toLowerCase() }),
          by: { keyId: key.keyId },
        },
        clock.now(),
      )
      return answer(reply, result, agreementId)
    },
  )
}
