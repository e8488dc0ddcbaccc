/**
 * The partner's pages under /dashboard/partner, one plugin per page group. Each is encapsulated:
 * it inherits the dashboard's session, role and CSRF checks and its error pages, and adds nothing
 * another group can see.
 */
import { may } from '../../../domain/member-roles.js'
import { roleIn } from '../../../storage/membership-repository.js'
import type { PagePlugin } from '../../dashboard-context.js'
import { DashboardError } from '../../dashboard-error.js'
import { applicationPages } from './application/index.js'
import { deletionPages } from './deletion/index.js'
import { disclosurePages } from './disclosures/index.js'
import { keyPages } from './keys/index.js'
import { ltiPages } from './lti/index.js'
import { memberPages } from './members/index.js'
import { overviewPages } from './overview/index.js'
import { requestLogPages } from './request-log/index.js'
import { studentPages } from './students/index.js'
import { usagePages } from './usage/index.js'
import { webhookPages } from './webhooks/index.js'

export const partnerPages: PagePlugin = async (app, { context }) => {
  // After the dashboard's own checks: a change to the organisation needs a role that allows it.
  app.addHook('preHandler', async (request) => {
    const action = request.routeOptions.config.member
    const account = request.account
    if (action === undefined || account === null || account.organisation_id === null) return
    const role = await roleIn(context.storage.db, account.organisation_id, account.id)
    if (!may(role, action))
      throw new DashboardError(
        403,
        'Not allowed for your role',
        `As ${role === undefined ? 'someone who is not a member' : `a ${role}`} of this organisation you cannot do ` +
          'this. Ask one of its owners (the Members page lists them).',
      )
  })
  for (const group of [
    overviewPages,
    applicationPages,
    keyPages,
    studentPages,
    usagePages,
    requestLogPages,
    webhookPages,
    disclosurePages,
    deletionPages,
    memberPages,
    ltiPages,
  ])
    await app.register(group, { context })
}
