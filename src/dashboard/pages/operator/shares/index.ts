/**
 * Sharing students with an organisation from its page: a school (its students now and later) or
 * a pasted list, ending a share after a confirmation page, and the page of shared students with
 * the reason for each. Each change and its audit row are one transaction (cases/shares.ts
 * links and unlinks, and tells the partner).
 */
import { ConflictError, NotFoundError } from '../../../../domain/errors.js'
import { UUID } from '../../../../domain/uuid.js'
import { endShare, ShareInForceError, shareList, shareSchool } from '../../../../cases/shares.js'
import { heldByNoOtherShare, listShares, sharedStudents } from '../../../../storage/share-listing-repository.js'
import type { PagePlugin } from '../../../dashboard-context.js'
import { type FormBody, text } from '../../../forms.js'
import { sendPage } from '../../../send-page.js'
import { auditActor } from '../audit-actor.js'
import { organisationParam } from '../organisation-param.js'
import { sendOrganisationPage } from '../organisations/organisation-page.js'
import { studentsOfList } from './student-list.js'
import { endShareConfirmBody, sharedStudentsPageBody } from './views.js'
import { operator } from '../../../page-roles.js'

const PAGE = 100

// Student ids: this page opens only from this dashboard, like the other student pages.
const studentPage = { config: { dashboard: 'operator' as const, studentData: true as const } }

function idOf(value: unknown): string | undefined {
  return typeof value === 'string' && UUID.test(value.trim()) ? value.trim().toLowerCase() : undefined
}

export const sharePages: PagePlugin = async (app, { context }) => {
  const { storage, clock } = context
  const db = storage.db

  app.post('/organisations/:id/shares/school', operator, async (request, reply) => {
    const o = await organisationParam(context, request)
    const schoolId = idOf(text(request.body as FormBody, 'school'))
    const refuse = (message: string, status: number) =>
      sendOrganisationPage(
        request,
        reply,
        context,
        o,
        {
          share: { kind: 'school', values: { school: schoolId ?? '' }, errors: { school: message } },
        },
        status,
      )
    if (schoolId === undefined) return refuse('Choose a school to share.', 400)
    const now = clock.now()
    try {
      const outcome = await shareSchool(
        db,
        { organisationId: o.id, schoolId, createdBy: `operator:${request.account!.id}` },
        now,
        { actor: auditActor(request) },
      )
      return reply.redirect(`/dashboard/operator/organisations/${o.id}?shared=${outcome.share.id}#shares`, 303)
    } catch (error) {
      if (error instanceof ShareInForceError)
        return refuse(`${error.share.label} is shared with ${o.name} already.`, 409)
      if (error instanceof NotFoundError) return refuse('There is no such school: choose one from the list.', 400)
      throw error
    }
  })

  app.post('/organisations/:id/shares/list', operator, async (request, reply) => {
    const o = await organisationParam(context, request)
    const form = request.body as FormBody
    const values = { students: text(form, 'students'), label: text(form, 'label') }
    const { ids, problem } = await studentsOfList(db, values.students)
    const errors: Record<string, string> = {}
    if (problem !== null) errors.students = problem
    if (values.label === '') errors.label = 'Give the list a label, e.g. "Reading club".'
    if (Object.keys(errors).length > 0)
      return sendOrganisationPage(request, reply, context, o, { share: { kind: 'list', values, errors } }, 400)
    const now = clock.now()
    try {
      const outcome = await shareList(
        db,
        { organisationId: o.id, studentIds: ids, label: values.label, createdBy: `operator:${request.account!.id}` },
        now,
        { actor: auditActor(request) },
      )
      return reply.redirect(`/dashboard/operator/organisations/${o.id}?shared=${outcome.share.id}#shares`, 303)
    } catch (error) {
      // The label's own rules (length, one line), or a student erased since the list was read.
      if (!(error instanceof ConflictError || error instanceof NotFoundError)) throw error
      const field = /label/.test(error.message) ? 'label' : 'students'
      const share = { kind: 'list' as const, values, errors: { [field]: `Nothing was shared: ${error.message}.` } }
      return sendOrganisationPage(request, reply, context, o, { share }, 400)
    }
  })

  const shareOf = async (organisationId: string, params: unknown) => {
    const shareId = idOf((params as { shareId?: unknown }).shareId)
    const share = (await listShares(db, organisationId)).find((s) => s.id === shareId)
    if (share === undefined) throw new NotFoundError(`no share ${shareId}`)
    return share
  }

  app.get('/organisations/:id/shares/:shareId/end', operator, async (request, reply) => {
    const o = await organisationParam(context, request)
    const share = await shareOf(o.id, request.params)
    const body = endShareConfirmBody(request, o, share, await heldByNoOtherShare(db, share.id))
    return sendPage(request, reply, `End a share with ${o.name}?`, body, 200, '/dashboard/operator/organisations')
  })

  app.post('/organisations/:id/shares/:shareId/end', operator, async (request, reply) => {
    const o = await organisationParam(context, request)
    const share = await shareOf(o.id, request.params)
    const now = clock.now()
    await endShare(db, share.id, now, { actor: auditActor(request) })
    return reply.redirect(`/dashboard/operator/organisations/${o.id}?ended=${share.id}#shares`, 303)
  })

  app.get('/organisations/:id/shared', studentPage, async (request, reply) => {
    const o = await organisationParam(context, request)
    const page = await sharedStudents(db, o.id, {
      after: idOf((request.query as { after?: unknown }).after),
      limit: PAGE,
    })
    const body = sharedStudentsPageBody(o, page)
    return sendPage(request, reply, `Students shared with ${o.name}`, body, 200, '/dashboard/operator/organisations')
  })
}
