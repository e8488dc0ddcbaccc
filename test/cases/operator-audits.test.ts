/**
 * An operator's change or download from the dashboard is audited by its case: the agreement
 * recorded or ended with its audit entry in one transaction (a refused change leaves neither),
 * and each download of the disclosure log audited before its first byte, with the entry the
 * audit log has always shown.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { endAgreementAudited } from '../../src/cases/agreement-end.js'
import { recordAgreementAudited } from '../../src/cases/agreement-record.js'
import { auditedLogCsv, auditedReportChunks } from '../../src/cases/disclosure-export.js'
import { rangeReport, studentReport } from '../../src/cases/disclosure-report.js'
import { ConflictError } from '../../src/domain/errors.js'
import { createOrganisation } from '../../src/storage/access-repository.js'
import type { Storage } from '../../src/storage/connection.js'
import { createTestStorage, START, STUDENTS } from '../helper.js'

const DAY = 86_400_000
const ACTOR = 'account:operator@district.example'
const AUDIT = { actor: ACTOR }

describe('the operator audits of the agreement and disclosure cases', () => {
  let storage: Storage
  beforeEach(async () => {
    storage = await createTestStorage()
  })
  afterEach(async () => {
    await storage.close()
  })

  const audits = async () =>
    (
      await storage.db.selectFrom('audit_log').select(['actor', 'action', 'target', 'detail']).orderBy('id').execute()
    ).map((row) => ({ ...row, detail: JSON.parse(row.detail) }))

  it('records an agreement and ends it, each with its audit entry', async () => {
    const acme = await createOrganisation(storage.db, 'Acme Learning', START)
    const terms = { signedAt: START - DAY, expiresAt: null, documentRef: 'DSA-1', purpose: 'Reading practice' }
    const row = await recordAgreementAudited(storage.db, acme, terms, AUDIT, START)
    await endAgreementAudited(storage.db, { organisation: acme, agreement: row }, AUDIT, START + DAY)

    const ended = await storage.db.selectFrom('agreements').select('ended_at').executeTakeFirstOrThrow()
    expect(ended.ended_at).toBe(new Date(START + DAY).toISOString())
    expect(await audits()).toEqual([
      {
        actor: ACTOR,
        action: 'agreement.record',
        target: `organisation:${acme.id}`,
        detail: {
          organisation: 'Acme Learning',
          agreementId: row.id,
          document: 'DSA-1',
          signed: row.signed_at,
          expires: null,
          purpose: 'Reading practice',
          data: row.data_categories,
          dispositionDays: row.disposition_days,
        },
      },
      {
        actor: ACTOR,
        action: 'agreement.end',
        target: `organisation:${acme.id}`,
        detail: { organisation: 'Acme Learning', agreementId: row.id, document: 'DSA-1' },
      },
    ])
  })

  it('writes neither the agreement nor its audit entry when the terms are refused', async () => {
    const acme = await createOrganisation(storage.db, 'Acme Learning', START)
    const terms = { signedAt: START, expiresAt: START - DAY, documentRef: 'DSA-1', purpose: 'Reading practice' }
    await expect(recordAgreementAudited(storage.db, acme, terms, AUDIT, START)).rejects.toThrow(ConflictError)
    expect(await storage.db.selectFrom('agreements').selectAll().execute()).toEqual([])
    expect(await audits()).toEqual([])
  })

  it('audits a report and an export before their first byte', async () => {
    const acme = await createOrganisation(storage.db, 'Acme Learning', START)
    const student = { id: STUDENTS.ada, firstName: null, externalId: null }
    const chunks = await auditedReportChunks(storage.db, studentReport(student, START), 'json', AUDIT, START)
    const range = rangeReport({ since: START - DAY }, acme, null, START)
    await auditedReportChunks(storage.db, range, 'csv', AUDIT, START)
    const csv = await auditedLogCsv(storage.db, { organisationId: acme.id }, 10, AUDIT, START)

    expect(await audits()).toEqual([
      {
        actor: ACTOR,
        action: 'disclosures.report',
        target: `student:${STUDENTS.ada}`,
        detail: { student: STUDENTS.ada, format: 'json' },
      },
      {
        actor: ACTOR,
        action: 'disclosures.export',
        target: 'disclosures',
        detail: { format: 'csv', filter: { since: START - DAY, organisationId: acme.id } },
      },
      {
        actor: ACTOR,
        action: 'disclosures.export',
        target: 'disclosures',
        detail: { rows: 0, filter: { organisationId: acme.id } },
      },
    ])
    let json = ''
    for await (const chunk of chunks) json += chunk
    expect(JSON.parse(json)).toMatchObject({ report: 'disclosures', student, disclosures: [], rows: 0 })
    expect(csv).toBe('at,organisation_id,key_id,student_id,action,outcome,request_id\r\n')
  })
})
