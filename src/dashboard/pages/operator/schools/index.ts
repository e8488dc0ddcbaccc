/** The schools: the list with each one's counts, and adding one by hand, audited. */
import { ConflictError } from '../../../../domain/errors.js'
import { createSchool, newSchoolProblems } from '../../../../cases/schools.js'
import { listSchools } from '../../../../storage/school-repository.js'
import type { PagePlugin } from '../../../dashboard-context.js'
import { type FormBody, text } from '../../../forms.js'
import { sendPage } from '../../../send-page.js'
import { auditActor } from '../audit-actor.js'
import { type SchoolForm, schoolsBody } from './views.js'
import { operator } from '../../../page-roles.js'

const PATH = '/dashboard/operator/schools'

export const schoolPages: PagePlugin = async (app, { context }) => {
  const { storage, clock } = context
  const db = storage.db

  app.get('/schools', operator, async (request, reply) =>
    sendPage(request, reply, 'Schools', schoolsBody(request, await listSchools(db), undefined), 200, PATH),
  )

  app.post('/schools', operator, async (request, reply) => {
    const form = request.body as FormBody
    const values = { name: text(form, 'name'), identifier: text(form, 'identifier') }
    const refuse = async (refused: SchoolForm, status: number) =>
      sendPage(request, reply, 'Schools', schoolsBody(request, await listSchools(db), refused), status, PATH)
    const errors = newSchoolProblems(values)
    if (Object.keys(errors).length > 0) return refuse({ values, errors: capitalised(errors) }, 400)
    const now = clock.now()
    try {
      const school = await createSchool(db, values, now, { actor: auditActor(request) })
      return reply.redirect(`${PATH}?added=${school.id}`, 303)
    } catch (error) {
      if (!(error instanceof ConflictError)) throw error
      return refuse({ values, errors: { name: `${error.message}.` } }, 409)
    }
  })
}

/** "the name is required" as a message that starts a sentence. */
function capitalised(errors: Record<string, string>): Record<string, string> {
  return Object.fromEntries(
    Object.entries(errors).map(([name, message]) => [name, `${message[0]!.toUpperCase()}${message.slice(1)}.`]),
  )
}
