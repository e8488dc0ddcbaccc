/**
 * The operator's disclosure log: every read, send and refusal of a student's data, filtered and
 * paged, and its CSV export (the export itself audited). Both show student ids, so both open only
 * from this dashboard.
 */
import { pageDisclosures } from '../../../../storage/disclosure-log.js'
import { listOrganisationsByName } from '../../../../storage/access-repository.js'
import { Readable } from 'node:stream'
import { auditedLogCsv, auditedReportChunks } from '../../../../cases/disclosure-export.js'
import { rangeReport, REPORT_CONTENT_TYPES, REPORT_FORMATS } from '../../../../cases/disclosure-report.js'
import { DashboardError } from '../../../dashboard-error.js'
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
    const [page, organisations, schools] = await Promise.all([
      pageDisclosures(db, parsed.filter, DISCLOSURE_PAGE, parsed.before),
      listOrganisationsByName(db),
      db.selectFrom('schools').select(['id', 'name']).orderBy('name').orderBy('id').execute(),
    ])
    const body = disclosuresBody(parsed, page, organisations, schools)
    return sendPage(request, reply, 'Disclosure log', body, 200, '/dashboard/operator/disclosures')
  })

  for (const format of REPORT_FORMATS)
    app.get(`/disclosures/export.${format}`, studentPage, async (request, reply) => {
      const { filter, problems } = disclosureFilter(request.query as Record<string, unknown>)
      if (problems.length > 0) throw new DashboardError(400, 'Bad request', problems.join(' '))
      const now = clock.now()
      const [organisation, school] = await Promise.all([
        filter.organisationId === undefined
          ? null
          : db
              .selectFrom('organisations')
              .select(['id', 'name'])
              .where('id', '=', filter.organisationId)
              .executeTakeFirst(),
        filter.schoolId === undefined
          ? null
          : db.selectFrom('schools').select(['id', 'name']).where('id', '=', filter.schoolId).executeTakeFirst(),
      ])
      if (organisation === undefined || school === undefined)
        throw new DashboardError(404, 'Not found', 'There is no such organisation or school.')
      const report = rangeReport(filter, organisation, school, now)
      reply
        .type(REPORT_CONTENT_TYPES[format])
        .header(
          'content-disposition',
          `attachment; filename="disclosures-${new Date(now).toISOString().slice(0, 10)}.${format}"`,
        )
      // A HEAD request (Fastify answers it with this handler) is shown nothing, so nothing is read or audited.
      if (request.method === 'HEAD') return reply.send()
      // Before the first byte: a download cut short was still recorded.
      const chunks = await auditedReportChunks(db, report, format, { actor: auditActor(request) }, now)
      return reply.send(Readable.from(chunks, { highWaterMark: 1 }))
    })

  app.get('/disclosures.csv', studentPage, async (request, reply) => {
    const { filter } = disclosureFilter(request.query as Record<string, unknown>)
    const csv = await auditedLogCsv(db, filter, CSV_EXPORT_LIMIT, { actor: auditActor(request) }, clock.now())
    return reply
      .type('text/csv; charset=utf-8')
      .header(
        'content-disposition',
        `attachment; filename="disclosures-${new Date(clock.now()).toISOString().slice(0, 10)}.csv"`,
      )
      .send(csv)
  })
}
