/**
 * The operator's pages under /dashboard/operator, one plugin per page group: the review queue,
 * organisations, their agreements (and what follows their end), keys and shares, their students
 * (unlink, erase), the schools, roster imports, the disclosure log, the audit log and the outbox. Every change
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
import { organisationPages } from './organisations/index.js'
import { outboxPages } from './outbox/index.js'
import { schoolPages } from './schools/index.js'
import { sharePages } from './shares/index.js'
import { rosterPages } from './roster/index.js'
import { studentPages } from './students/index.js'
import { studentDisclosurePages } from './student-disclosures/index.js'
import { operator } from '../../page-roles.js'

export const operatorPages: PagePlugin = async (app, { context }) => {
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
    auditPages,
    outboxPages,
  ])
    await app.register(group, { context })
}
