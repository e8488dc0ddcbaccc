/**
 * Recording an organisation's signed data-sharing agreement, from the operator's dashboard or the
 * CLI: its terms checked, the row written and the access change logged in one transaction, so
 * running instances evict the organisation's cached keys within one poll interval.
 */
import { randomUUID } from 'node:crypto'
import type { Kysely } from 'kysely'
import { isoAt } from '../clock.js'
import {
  DATA_CATEGORIES,
  type DataCategory,
  DEFAULT_DISPOSITION_DAYS,
  dispositionDaysProblem,
  formatDataCategories,
  normalizePurpose,
  purposeProblem,
} from '../domain/agreement-terms.js'
import { ConflictError } from '../domain/errors.js'
import { recordAccessChange } from '../storage/access-change-repository.js'
import { insertAgreement } from '../storage/access-repository.js'
import type { AgreementRow, Database } from '../storage/tables.js'
import { inTransaction } from '../storage/transaction.js'
import { announceNotices, type NoticeContext, type QueuedNotice, queueAgreementRecordedNotice } from './notices.js'
import { auditOperator, type OperatorAudit } from './operator-action.js'

export interface NewAgreement {
  organisationId: string
  signedAt: number
  expiresAt: number | null
  documentRef: string
  /**
   * What the partner may use the data for. The CLI and the dashboard require one; left out (seed
   * data, fixtures) it is stored empty, which reads as "not recorded".
   */
  purpose?: string
  /** The kinds of data shared; all of them when left out. */
  dataCategories?: readonly DataCategory[]
  /** Days after the end within which the partner must delete the data; DEFAULT_DISPOSITION_DAYS when left out. */
  dispositionDays?: number
}

export async function recordAgreement(
  db: Kysely<Database>,
  agreement: NewAgreement,
  now: number,
  notices?: NoticeContext,
): Promise<AgreementRow> {
  const { row, queued } = await writeAgreement(db, agreement, now, notices)
  announceNotices(notices?.held, queued)
  return row
}

/** Checks and writes the agreement, queueing its notice; the caller announces it after its commit. */
async function writeAgreement(
  db: Kysely<Database>,
  agreement: NewAgreement,
  now: number,
  notices: NoticeContext | undefined,
): Promise<{ row: AgreementRow; queued: QueuedNotice[] }> {
  if (agreement.expiresAt !== null && agreement.expiresAt <= agreement.signedAt) {
    throw new ConflictError('an agreement must expire after it is signed')
  }
  if (agreement.documentRef.trim() === '') throw new ConflictError('an agreement needs a document reference')
  const purpose = normalizePurpose(agreement.purpose ?? '')
  const problem =
    (agreement.purpose === undefined ? null : purposeProblem(purpose)) ??
    dispositionDaysProblem(agreement.dispositionDays ?? DEFAULT_DISPOSITION_DAYS)
  if (problem !== null) throw new ConflictError(problem)
  if (agreement.dataCategories !== undefined && agreement.dataCategories.length === 0)
    throw new ConflictError('an agreement shares at least one kind of data')
  const row: AgreementRow = {
    id: randomUUID(),
    organisation_id: agreement.organisationId,
    signed_at: isoAt(agreement.signedAt),
    expires_at: agreement.expiresAt === null ? null : isoAt(agreement.expiresAt),
    ended_at: null,
    document_ref: agreement.documentRef.trim(),
    created_at: isoAt(now),
    purpose,
    data_categories: formatDataCategories(agreement.dataCategories ?? DATA_CATEGORIES),
    disposition_days: agreement.dispositionDays ?? DEFAULT_DISPOSITION_DAYS,
  }
  const queued = await inTransaction(db, async (trx) => {
    await insertAgreement(trx, row)
    await recordAccessChange(trx, { kind: 'agreements', organisationId: agreement.organisationId })
    return notices ? queueAgreementRecordedNotice(trx, row, notices, now) : []
  })
  return { row, queued }
}

/** What the audit log keeps of a recorded agreement, the same from the dashboard and the CLI. */
export function agreementAuditDetail(organisationName: string, row: AgreementRow): Record<string, unknown> {
  return {
    organisation: organisationName,
    agreementId: row.id,
    document: row.document_ref,
    signed: row.signed_at,
    expires: row.expires_at,
    purpose: row.purpose,
    data: row.data_categories,
    dispositionDays: row.disposition_days,
  }
}

/** The operator's recording in the dashboard: the agreement and its audit entry in one transaction. */
export async function recordAgreementAudited(
  db: Kysely<Database>,
  organisation: { id: string; name: string },
  agreement: Omit<NewAgreement, 'organisationId'>,
  audit: OperatorAudit,
  now: number,
  notices?: NoticeContext,
): Promise<AgreementRow> {
  const { row, queued } = await inTransaction(db, async (trx) => {
    const written = await writeAgreement(trx, { ...agreement, organisationId: organisation.id }, now, notices)
    const { row } = written
    await auditOperator(
      trx,
      audit,
      {
        action: 'agreement.record',
        target: `organisation:${organisation.id}`,
        detail: agreementAuditDetail(organisation.name, row),
      },
      now,
    )
    return written
  })
  // Announced after the commit: inside the transaction, the held log would name a message not yet written.
  announceNotices(notices?.held, queued)
  return row
}
