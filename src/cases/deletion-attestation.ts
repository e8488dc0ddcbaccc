/**
 * A partner's attestation that it deleted the data shared under an ended agreement, made in the
 * dashboard (by an account) or through the API (by a live key), recorded once per agreement: the
 * row's key is the agreement, so of two attestations racing one is recorded and the other finds it.
 * An end still within its disposition period can be attested too: a partner may delete early. The
 * attestation keeps how many students the deletion list held then (storage/deletion-list-repository.ts), so
 * the certificate can say whether it covers the whole list.
 */
import type { Kysely } from 'kysely'
import { isoAt } from '../clock.js'
import { type AgreementEnd, agreementEnds } from '../storage/agreement-end-repository.js'
import { type Attesting, insertAttestation } from '../storage/deletion-attestation-repository.js'
import type { Database } from '../storage/tables.js'
import { inTransaction } from '../storage/transaction.js'

type Db = Kysely<Database>

export type AttestationOutcome =
  /** Recorded now; `end` carries it. */
  | { outcome: 'attested'; end: AgreementEnd }
  /** No ended agreement of the organisation awaits an attestation (or `agreementId` names none of its ends). */
  | { outcome: 'nothing'; ends: AgreementEnd[] }
  /** Attested before; `end` carries the attestation recorded. */
  | { outcome: 'already'; end: AgreementEnd }
  /** Several ends await one and none was named. */
  | { outcome: 'ambiguous'; awaiting: AgreementEnd[] }

/**
 * Records the attestation of the end of `agreementId`, or, when it is left out, of the one end of
 * the organisation that awaits one.
 */
export function attestDeletion(
  db: Db,
  request: { organisationId: string; agreementId?: string; by: Attesting },
  now: number,
): Promise<AttestationOutcome> {
  const { organisationId, agreementId, by } = request
  return inTransaction(db, async (trx): Promise<AttestationOutcome> => {
    const ends = await agreementEnds(trx, now, organisationId)
    let end: AgreementEnd | undefined
    if (agreementId !== undefined) {
      end = ends.find((candidate) => candidate.agreement.id === agreementId)
      if (end === undefined) return { outcome: 'nothing', ends }
    } else {
      const awaiting = ends.filter((candidate) => candidate.attestation === null)
      if (awaiting.length > 1) return { outcome: 'ambiguous', awaiting }
      end = awaiting[0] ?? ends[0]
      if (end === undefined) return { outcome: 'nothing', ends }
    }
    if (end.attestation !== null) return { outcome: 'already', end }
    const recorded = await insertAttestation(trx, {
      agreementId: end.agreement.id,
      organisationId,
      attestedAt: isoAt(now),
      by,
      students: end.students,
    })
    const agreement = end.agreement.id
    const after = (await agreementEnds(trx, now, organisationId)).find((e) => e.agreement.id === agreement)!
    return recorded ? { outcome: 'attested', end: after } : { outcome: 'already', end: after }
  })
}
