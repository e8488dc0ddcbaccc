/**
 * Ending agreements, from the operator's dashboard or the CLI: the end written and the access
 * change logged in one transaction, so running instances evict the organisation's cached keys
 * within one poll interval. With no other agreement in force its keys lose student data at once,
 * and its links end once the disposition period is over (agreement-disposition.ts).
 */
import type { Kysely } from 'kysely'
import { isoAt } from '../clock.js'
import { recordAccessChange } from '../storage/access-change-repository.js'
import { markAgreementsEnded } from '../storage/access-repository.js'
import type { AgreementRow, Database } from '../storage/tables.js'
import { inTransaction } from '../storage/transaction.js'
import { auditOperator, type OperatorAudit } from './operator-action.js'

/** Ends one agreement, or every agreement of an organisation that has not ended yet. */
export async function endAgreements(
  db: Kysely<Database>,
  target: { agreementId: string } | { organisationId: string },
  now: number,
): Promise<AgreementRow[]> {
  return inTransaction(db, async (trx) => {
    const rows = await markAgreementsEnded(trx, target, isoAt(now))
    for (const organisationId of new Set(rows.map((row) => row.organisation_id)))
      await recordAccessChange(trx, { kind: 'agreements', organisationId })
    return rows
  })
}

/** The operator's ending of one agreement in the dashboard: the end and its audit entry in one transaction. */
export function endAgreementAudited(
  db: Kysely<Database>,
  ending: { organisation: { id: string; name: string }; agreement: AgreementRow },
  audit: OperatorAudit,
  now: number,
): Promise<void> {
  const { organisation, agreement } = ending
  return inTransaction(db, async (trx) => {
    await endAgreements(trx, { agreementId: agreement.id }, now)
    await auditOperator(
      trx,
      audit,
      {
        action: 'agreement.end',
        target: `organisation:${organisation.id}`,
        detail: { organisation: organisation.name, agreementId: agreement.id, document: agreement.document_ref },
      },
      now,
    )
  })
}
