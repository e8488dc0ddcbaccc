/**
 * The operator's disclosure log: every read, send and refusal of a student's data, filtered and
 * paged, and its CSV export (the export itself audited). Both show student ids, so both open only
 * from this dashboard.
 */
import { listDisclosures, pageDisclosures } from '../../../../storage/disclosure-log.js'
import { listOrganisationsByName } from '../../../../storage/access-repository.js'
import { csvCell } from '../../../../services/csv-cell.js'
import { recordAudit } from '../../../../storage/audit-repository.js'
import type { PagePlugin } from '../../../dashboard-context.js'
import { sendPage } from '../../../send-page.js'
import { auditActor } from '../audit-actor.js'
import { disclosureFilter } from './disclosure-filter.js'
import { disclosuresBody } from './views.js'

const studentPage = { config: { dashboard: 'operator' as const, studentData: true as const } }

/** Rows per page of the disclosure log, and at most in one CSV export (newest first). */
const DISCLOSURE_PAGE = 200
const CSV_EXPORT_LIMIT = 100_000

export const disclosurePages: PagePlugin = async (app, { context }) => {
  const { storage, clock } = context
  const db = storage.db

  app.get('/disclosures', studentPage, async (request, reply) => {
    const parsed = disclosureFilter(request.query as Record<string, unknown>)
    const [page, organisations] = await Promise.all([
      pageDisclosures(db, parsed.filter, DISCLOSURE_PAGE, parsed.before),
      listOrganisationsByName(db),
    ])
    const body = disclosuresBody(parsed, page, organisations)
    return sendPage(request, reply, 'Disclosure log', body, 200, '/dashboard/operator/disclosures')
  })

  app.get('/disclosures.csv', studentPage, async (request, reply) => {
    const { filter } = disclosureFilter(request.query as Record<string, unknown>)
    const rows = await listDisclosures(db, { ...filter, limit: CSV_EXPORT_LIMIT })
    const lines = [['at', 'organisation_id', 'key_id', 'student_id', 'action', 'outcome', 'request_id'].join(',')]
    for (const row of rows)
      lines.push(
        [row.at, row.organisation_id, row.key_id, row.student_id, row.action, row.outcome, row.request_id]
          .map(csvCell)
          .join(','),
      )
    await recordAudit(
      db,
      {
        actor: auditActor(request),
        action: 'disclosures.export',
        target: 'disclosures',
        detail: { rows: rows.length, filter },
      },
      clock.now(),
    )
    return reply
      .type('text/csv; charset=utf-8')
      .header(
        'content-disposition',
        `attachment; filename="disclosures-${new Date(clock.now()).toISOString().slice(0, 10)}.csv"`,
      )
      .send(`${lines.join('\r\n')}\r\n`)
  })
}
