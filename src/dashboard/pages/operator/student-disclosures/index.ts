/**
 * One student's disclosure report for the operator: every disclosure of the student's data,
 * oldest first, with who, when, what and under which agreement (and that agreement's terms),
 * and the same as CSV and JSON downloads, streamed (cases/disclosure-report.ts). This is what
 * answers a parent's request to inspect the record. Every page and download shows children's
 * data, so all open only from this dashboard; each download is audited before its first byte.
 */
import { Readable } from 'node:stream'
import { NotFoundError } from '../../../../domain/errors.js'
import { UUID } from '../../../../domain/uuid.js'
import { auditedReportChunks } from '../../../../cases/disclosure-export.js'
import { REPORT_CONTENT_TYPES, studentReport } from '../../../../cases/disclosure-report.js'
import {
  describedDisclosures,
  type ReportRow,
  reportStudent,
} from '../../../../storage/disclosure-report-repository.js'
import type { PagePlugin } from '../../../dashboard-context.js'
import { sendPage } from '../../../send-page.js'
import { auditActor } from '../audit-actor.js'
import { studentReportBody } from './views.js'

const studentPage = { config: { dashboard: 'operator' as const, studentData: true as const } }

/** Records per page, oldest first. */
const PAGE = 200

/** The student an address names, in the stored (lower-case) form; 404 for anything but a UUID. */
function studentParam(params: unknown): string {
  const { id } = params as { id: string }
  if (!UUID.test(id)) throw new NotFoundError(id)
  return id.toLowerCase()
}

export const studentDisclosurePages: PagePlugin = async (app, { context }) => {
  const { storage, clock } = context
  const db = storage.db

  app.get('/students/:id/disclosures', studentPage, async (request, reply) => {
    const studentId = studentParam(request.params)
    const { after } = request.query as { after?: string }
    const afterId = typeof after === 'string' && /^\d{1,15}$/.test(after) ? Number(after) : undefined
    const rows: ReportRow[] = []
    for await (const batch of describedDisclosures(
      db,
      { studentId, ...(afterId === undefined ? {} : { afterId }) },
      PAGE + 1,
    )) {
      rows.push(...batch)
      if (rows.length > PAGE) break
    }
    const next = rows.length > PAGE ? rows[PAGE - 1]!.id : null
    const student = await reportStudent(db, studentId)
    const body = studentReportBody(student, rows.slice(0, PAGE), { next, continued: afterId !== undefined })
    return sendPage(request, reply, 'Student disclosure report', body, 200, '/dashboard/operator/disclosures')
  })

  for (const format of ['csv', 'json'] as const) {
    app.get(`/students/:id/disclosures.${format}`, studentPage, async (request, reply) => {
      const studentId = studentParam(request.params)
      const now = clock.now()
      const day = new Date(now).toISOString().slice(0, 10)
      reply
        .type(REPORT_CONTENT_TYPES[format])
        .header('content-disposition', `attachment; filename="disclosures-${studentId}-${day}.${format}"`)
      // A HEAD request (Fastify answers it with this handler) is shown nothing, so nothing is read or audited.
      if (request.method === 'HEAD') return reply.send()
      const student = await reportStudent(db, studentId)
      const report = studentReport(student, now)
      // Before the first byte: a download cut short was still recorded.
      const chunks = await auditedReportChunks(db, report, format, { actor: auditActor(request) }, now)
      return reply.send(Readable.from(chunks, { highWaterMark: 1 }))
    })
  }
}
