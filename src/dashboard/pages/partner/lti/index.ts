/**
 * An owner's view of the learning platforms registered for their organisation (LTI): read only,
 * since the operator registers, activates and deactivates them. The platforms' launches make the
 * organisation's students, and their progress goes to the platforms' gradebooks.
 */
import { registrationSummaries } from '../../../../storage/lti-registration-list-repository.js'
import type { PagePlugin } from '../../../dashboard-context.js'
import { html } from '../../../html.js'
import { partnerMay } from '../../../page-roles.js'
import { sendPage } from '../../../send-page.js'
import { registrationsTable } from '../../../views/lti-registrations.js'
import { partnerView } from '../partner-view.js'

const PATH = '/dashboard/partner/lti'

export const ltiPages: PagePlugin = async (app, { context }) => {
  app.get('/lti', partnerMay('lti.read'), async (request, reply) => {
    const v = await partnerView(context, request)
    const summaries =
      v.organisation === undefined ? [] : await registrationSummaries(context.storage.db, v.organisation.id)
    const body = html`<p>The learning platforms (Canvas, Moodle, Schoology and others) whose launches open lessons
for your organisation's students. Students are made by their first launch, first name only, and belong to your
organisation; their progress is read through the API like any other, and sent to the platform's gradebook. The
operator registers, activates and deactivates platforms: ask them for a registration URL to give a district.</p>
${registrationsTable(summaries, { organisation: false })}`
    return sendPage(request, reply, 'Learning platforms', body, 200, PATH)
  })
}
