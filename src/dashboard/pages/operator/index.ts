/**
 * The operator's pages under /dashboard/operator, one plugin per page group: the review queue,
 * organisations, their agreements (and what follows their end), keys and shares, their students
 * (unlink, erase), the schools, roster imports, the disclosure log, the request log, the audit log, the outbox and
 * the LTI registrations and tool key, and the operators (admins only). Every change
 * made here is written to the audit log in the same transaction. Each group is encapsulated: it
 * inherits the dashboard's session, role and CSRF checks and its error pages.
 */
import type { PagePlugin } from '../../dashboard-context.js'
import { agreementPages } from './agreements/index.js'
import { applicationPages } from './applications/index.js'
import { auditPages } from './audit/index.js'
import { disclosurePages } from './disclosures/index.js'
import { endedAgreementPages } from './ended-agreements/index.js'
import { keyPages } from './keys/index.js'
import { ltiScorePages } from './lti-scores/index.js'
import { ltiPages } from './lti/index.js'
import { organisationPages } from './organisations/index.js'
import { outboxPages } from './outbox/index.js'
import { schoolPages } from './schools/index.js'
import { sharePages } from './shares/index.js'
import { rosterPages } from './roster/index.js'
import { requestLogPages } from './request-log/index.js'
import { studentPages } from './students/index.js'
import { studentDisclosurePages } from './student-disclosures/index.js'
import { operator } from '../../page-roles.js'
import { DashboardError } from '../../dashboard-error.js'
import { operatorPagesOfAdmins } from './operators/index.js'

export const operatorPages: PagePlugin = async (app, { context }) => {
  // After the dashboard's own checks: managing operators needs an operator admin.
  app.addHook('preHandler', async (request) => {
    if (request.routeOptions.config.operatorAdmin !== true || request.account === null) return
    if (request.account.operator_role !== 'admin')
      throw new DashboardError(
        403,
        'Not allowed for your role',
        'Only an operator admin manages operators. Ask one of them (the audit log names who invited you).',
      )
  })
  // '' and not '/': the redirect answers at /dashboard/operator only, not with a trailing slash.
  app.get('', operator, (_request, reply) => reply.redirect('/dashboard/operator/applications', 303))
  for (const group of [
    applicationPages,
    organisationPages,
    agreementPages,
    endedAgreementPages,
    keyPages,
    sharePages,
    studentPages,
    schoolPages,
    rosterPages,
    disclosurePages,
    studentDisclosurePages,
    requestLogPages,
    auditPages,
    outboxPages,
    ltiScorePages,
    ltiPages,
    operatorPagesOfAdmins,
  ])
    await app.register(group, { context })
}
