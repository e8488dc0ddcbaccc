/**
 * The operator's downloads of the disclosure log from the dashboard: a report (one student's, or
 * a range's) and the log's own CSV export. Each hands children's data on, so each is audited
 * before its first byte: a download cut short was still recorded.
 */
import type { Kysely } from 'kysely'
import { csvCell } from '../domain/csv-cell.js'
import { type DisclosureFilter, listDisclosures } from '../storage/disclosure-log.js'
import type { Database } from '../storage/tables.js'
import { type ReportFormat, type ReportRequest, reportChunks } from './disclosure-report.js'
import { auditOperator, type OperatorAudit } from './operator-action.js'

type Db = Kysely<Database>

/** The report's text (disclosure-report.ts), once the operator's download of it is audited. */
export async function auditedReportChunks(
  db: Db,
  request: ReportRequest,
  format: ReportFormat,
  audit: OperatorAudit,
  now: number,
): Promise<AsyncGenerator<string, void, undefined>> {
  const { subject } = request
  const entry =
    subject.kind === 'student'
      ? {
          action: 'disclosures.report',
          target: `student:${subject.student.id}`,
          detail: { student: subject.student.id, format },
        }
      : { action: 'disclosures.export', target: 'disclosures', detail: { format, filter: request.filter } }
  await auditOperator(db, audit, entry, now)
  return reportChunks(db, request, format)
}

/** The log's rows that match `filter` (newest first, at most `limit`) as CSV, the download audited. */
export async function auditedLogCsv(
  db: Db,
  filter: DisclosureFilter,
  limit: number,
  audit: OperatorAudit,
  now: number,
): Promise<string> {
  const rows = await listDisclosures(db, { ...filter, limit })
  const lines = [['at', 'organisation_id', 'key_id', 'student_id', 'action', 'outcome', 'request_id'].join(',')]
  for (const row of rows)
    lines.push(
      [row.at, row.organisation_id, row.key_id, row.student_id, row.action, row.outcome, row.request_id]
        .map(csvCell)
        .join(','),
    )
  await auditOperator(
    db,
    audit,
    { action: 'disclosures.export', target: 'disclosures', detail: { rows: rows.length, filter } },
    now,
  )
  return `${lines.join('\r\n')}\r\n`
}
