/**
 * Taking students away from partners: an organisation's linked students and unlinking one (after
 * a confirmation page), and erasing a student (found by id, confirmed by typing the id). Each
 * change and its audit row are one transaction (cases/unlink.ts and cases/erasure.ts tell the partners).
 */
import { UUID } from '../../../../domain/uuid.js'
import { eraseStudents } from '../../../../cases/erasure.js'
import { unlinkStudent } from '../../../../cases/unlink.js'
import {
  isLinked,
  linkedStudents,
  studentIdBySearch,
  studentSummary,
} from '../../../../storage/linked-student-repository.js'
import type { PagePlugin } from '../../../dashboard-context.js'
import { DashboardError } from '../../../dashboard-error.js'
import { type FormBody, text } from '../../../forms.js'
import { sendPage } from '../../../send-page.js'
import { auditActor } from '../audit-actor.js'
import { organisationParam } from '../organisation-param.js'
import { erasePageBody, linkedStudentsBody, unlinkConfirmBody } from './views.js'
import { operator } from '../../../page-roles.js'

const PAGE = 100

// Student ids: these pages open only from this dashboard, like the disclosure and audit logs.
const studentPage = { config: { dashboard: 'operator' as const, studentData: true as const } }

/** A student id from a query or form value, lower-cased, or undefined when it is not one. */
function studentIdOf(value: unknown): string | undefined {
  return typeof value === 'string' && UUID.test(value.trim()) ? value.trim().toLowerCase() : undefined
}

function studentParam(params: unknown): string {
  const id = studentIdOf((params as { studentId?: unknown }).studentId)
  if (id === undefined) throw new DashboardError(404, 'Not found', 'There is no student with this id.')
  return id
}

export const studentPages: PagePlugin = async (app, { context }) => {
  const { storage, clock } = context
  const db = storage.db

  app.get('/organisations/:id/students', studentPage, async (request, reply) => {
    const o = await organisationParam(context, request)
    const query = request.query as Record<string, unknown>
    const page = await linkedStudents(db, o.id, { after: studentIdOf(query.after), limit: PAGE })
    const body = linkedStudentsBody(o, page, studentIdOf(query.unlinked))
    return sendPage(request, reply, `Students of ${o.name}`, body, 200, '/dashboard/operator/organisations')
  })

  app.get('/organisations/:id/students/:studentId/unlink', studentPage, async (request, reply) => {
    const o = await organisationParam(context, request)
    const studentId = studentParam(request.params)
    if (!(await isLinked(db, o.id, studentId)))
      throw new DashboardError(404, 'Not linked', `No student with this id is linked to ${o.name}.`)
    const body = unlinkConfirmBody(request, o, studentId)
    return sendPage(request, reply, `Unlink a student from ${o.name}?`, body, 200, '/dashboard/operator/organisations')
  })

  app.post('/organisations/:id/students/:studentId/unlink', operator, async (request, reply) => {
    const o = await organisationParam(context, request)
    const studentId = studentParam(request.params)
    const now = clock.now()
    await unlinkStudent(db, studentId, o.id, now, { actor: auditActor(request) })
    return reply.redirect(`/dashboard/operator/organisations/${o.id}/students?unlinked=${studentId}`, 303)
  })

  app.get('/students', studentPage, async (request, reply) => {
    const query = request.query as Record<string, unknown>
    const typed = typeof query.id === 'string' ? query.id.trim().slice(0, 256) : ''
    const id = typed === '' ? undefined : await studentIdBySearch(db, typed)
    const found = id === undefined ? undefined : await studentSummary(db, id)
    const erased = studentIdOf(query.erased)
    const body = erasePageBody(request, { id: found?.id ?? typed, ...(erased === undefined ? {} : { erased }) }, found)
    return sendPage(request, reply, 'Erase a student', body, 200, '/dashboard/operator/students')
  })

  app.post('/students/erase', operator, async (request, reply) => {
    const form = (request.body ?? {}) as FormBody
    const id = studentIdOf(text(form, 'id'))
    if (id === undefined) throw new DashboardError(404, 'Not found', 'There is no student with this id.')
    const found = await studentSummary(db, id)
    if (found === undefined || found.sandbox) {
      const body = erasePageBody(request, { id }, found)
      return sendPage(request, reply, 'Erase a student', body, found === undefined ? 404 : 409)
    }
    if (text(form, 'confirm').toLowerCase() !== id) {
      const error = 'Type the student id exactly as shown, to confirm which student to erase.'
      const body = erasePageBody(request, { id, error }, found)
      return sendPage(request, reply, 'Erase a student', body, 400, '/dashboard/operator/students')
    }
    const now = clock.now()
    await eraseStudents(db, [id], now, { actor: auditActor(request) })
    return reply.redirect(`/dashboard/operator/students?erased=${id}`, 303)
  })
}
