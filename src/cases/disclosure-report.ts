/**
 * A disclosure report as text, CSV or JSON, produced a batch at a time so that a report of any
 * size streams to a file or a download: one student's report answers a parent's request to
 * inspect the record (or a GDPR access request); a range of the whole log is a district's export.
 * The CLI and the dashboard both write it from here, so both say the same.
 *
 * CSV: one record per disclosure, every cell quoted and formula-safe (csv-cell.ts), the
 * agreement's terms repeated on each so that a row stands alone in a spreadsheet. JSON: one
 * document, `{"report", "generatedAt", "student" | "range", "disclosures": [...], "rows"}`;
 * `rows` comes last, so a download cut short is not valid JSON.
 */
import type { Kysely } from 'kysely'
import type { BatchFilter } from '../storage/disclosure-batch-repository.js'
import { describedDisclosures, type ReportRow, type ReportStudent } from '../storage/disclosure-report-repository.js'
import type { Database } from '../storage/tables.js'
import { csvRecord } from '../domain/csv-cell.js'

export const REPORT_FORMATS = ['csv', 'json'] as const
export type ReportFormat = (typeof REPORT_FORMATS)[number]

/** The media type a report of each format is served with. */
export const REPORT_CONTENT_TYPES: Readonly<Record<ReportFormat, string>> = {
  csv: 'text/csv; charset=utf-8',
  json: 'application/json; charset=utf-8',
}

export type ReportSubject =
  | { kind: 'student'; student: ReportStudent }
  | {
      kind: 'range'
      since: string | null
      until: string | null
      organisation: { id: string; name: string } | null
      /** Only the students who attend this school when the report is made, and erased ones who attended it. */
      school?: { id: string; name: string } | null
    }

export interface ReportRequest {
  subject: ReportSubject
  filter: BatchFilter
  generatedAt: string
}

/** The report of every disclosure of one student's data. */
export function studentReport(student: ReportStudent, now: number): ReportRequest {
  return {
    subject: { kind: 'student', student },
    filter: { studentId: student.id },
    generatedAt: new Date(now).toISOString(),
  }
}

/**
 * The report of a range of the log (either bound open, epoch ms): one organisation's rows when
 * `organisation` is given, and only those of `school`'s students when it is (storage/school-student-repository.ts).
 */
export function rangeReport(
  range: { since?: number; until?: number },
  organisation: { id: string; name: string } | null,
  school: { id: string; name: string } | null,
  now: number,
): ReportRequest {
  const at = (bound: number | undefined) => (bound === undefined ? null : new Date(bound).toISOString())
  return {
    subject: { kind: 'range', since: at(range.since), until: at(range.until), organisation, school },
    filter: {
      since: range.since,
      until: range.until,
      ...(organisation === null ? {} : { organisationId: organisation.id }),
      ...(school === null ? {} : { schoolId: school.id }),
    },
    generatedAt: new Date(now).toISOString(),
  }
}

export const REPORT_CSV_COLUMNS = [
  'at',
  'student_id',
  'student_external_id',
  'action',
  'outcome',
  'data',
  'beyond_agreement',
  'organisation_id',
  'organisation',
  'via',
  'key_id',
  'key_name',
  'key_prefix',
  'dashboard_account',
  'webhook_url',
  'webhook_event',
  'agreement_document',
  'agreement_purpose',
  'agreement_data',
  'agreement_signed',
  'agreement_expires',
  'agreement_ended',
  'disposition_days',
  'delete_by',
  'agreement_id',
  'request_id',
] as const

const VIA = { key: 'api key', dashboard: 'dashboard', webhook: 'webhook', lti: 'lti platform' } as const

/** The id of what made the request: a key's, an account's, an endpoint's or an LTI registration's. */
function requesterId(by: ReportRow['by']): string {
  switch (by.kind) {
    case 'key':
      return by.keyId
    case 'dashboard':
      return by.accountId
    case 'webhook':
      return by.endpointId
    case 'lti':
      return by.registrationId
  }
}

function csvRow(row: ReportRow): string {
  const { by, agreement: a } = row
  return csvRecord([
    row.at,
    row.studentId,
    row.studentExternalId,
    row.action,
    row.outcome,
    row.data.join(' '),
    row.beyondAgreement.join(' '),
    row.organisation.id,
    row.organisation.name,
    VIA[by.kind],
    requesterId(by),
    by.kind === 'key' ? by.name : null,
    by.kind === 'key' ? by.prefix : null,
    by.kind === 'dashboard' ? by.email : null,
    by.kind === 'webhook' ? by.url : null,
    by.kind === 'webhook' ? by.event : null,
    a?.documentRef ?? null,
    a?.purpose ?? null,
    a?.dataCategories.join(' ') ?? null,
    a?.signedAt ?? null,
    a?.expiresAt ?? null,
    a?.endedAt ?? null,
    a?.dispositionDays ?? null,
    a?.deleteBy ?? null,
    a?.id ?? null,
    row.requestId,
  ])
}

function head(request: ReportRequest): string {
  const { subject } = request
  const about =
    subject.kind === 'student'
      ? { student: subject.student }
      : {
          range: {
            since: subject.since,
            until: subject.until,
            organisation: subject.organisation,
            ...(subject.school === undefined ? {} : { school: subject.school }),
          },
        }
  const opening = JSON.stringify({ report: 'disclosures', generatedAt: request.generatedAt, ...about })
  return `${opening.slice(0, -1)},"disclosures":[`
}

/**
 * The report's text, a chunk per batch of rows; `tally.rows` counts the rows written so far, so
 * a caller can say how many went out (and how many did, should the stream break).
 */
export async function* reportChunks(
  db: Kysely<Database>,
  request: ReportRequest,
  format: ReportFormat,
  tally: { rows: number } = { rows: 0 },
  batchRows?: number,
): AsyncGenerator<string, void, undefined> {
  yield format === 'csv' ? csvRecord(REPORT_CSV_COLUMNS) : head(request)
  for await (const rows of describedDisclosures(db, request.filter, batchRows)) {
    let chunk = ''
    for (const row of rows) {
      chunk += format === 'csv' ? csvRow(row) : `${tally.rows === 0 ? '\n' : ',\n'}${JSON.stringify(row)}`
      tally.rows++
    }
    yield chunk
  }
  if (format === 'json') yield `${tally.rows === 0 ? '' : '\n'}],"rows":${tally.rows}}\n`
}
