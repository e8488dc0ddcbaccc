/**
 * The partners' attestations that they deleted the data of an ended agreement, one row per
 * agreement (the row's key). Recording one is cases/deletion-attestation.ts.
 */
import type { Kysely } from 'kysely'
import type { Database } from './tables.js'

/** Who attested: a partner's dashboard account, or a live key. */
export type Attesting = { accountId: string } | { keyId: string }

export interface NewAttestation {
  agreementId: string
  organisationId: string
  attestedAt: string
  by: Attesting
  /** Students on the deletion list when it was attested. */
  students: number
}

/** Writes the attestation unless the agreement has one already: false then, and nothing is written. */
export async function insertAttestation(trx: Kysely<Database>, attestation: NewAttestation): Promise<boolean> {
  const { by } = attestation
  const recorded = await trx
    .insertInto('deletion_attestations')
    .values({
      agreement_id: attestation.agreementId,
      organisation_id: attestation.organisationId,
      attested_at: attestation.attestedAt,
      account_id: 'accountId' in by ? by.accountId : null,
      key_id: 'keyId' in by ? by.keyId : null,
      students: attestation.students,
    })
    .onConflict((oc) => oc.column('agreement_id').doNothing())
    .returning('agreement_id')
    .executeTakeFirst()
  return recorded !== undefined
}
