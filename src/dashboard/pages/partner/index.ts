/**
 * The partner's pages under /dashboard/partner, one plugin per page group. Each is encapsulated:
 * it inherits the dashboard's session, role and CSRF checks and its error pages, and adds nothing
 * another group can see.
 */
import type { PagePlugin } from '../../dashboard-context.js'
import { applicationPages } from './application/index.js'
import { deletionPages } from './deletion/index.js'
import { disclosurePages } from './disclosures/index.js'
import { keyPages } from './keys/index.js'
import { overviewPages } from './overview/index.js'
import { studentPages } from './students/index.js'
import { usagePages } from './usage/index.js'
import { webhookPages } from './webhooks/index.js'

export const partnerPages: PagePlugin = async (app, { context }) => {
  for (const group of [
    overviewPages,
    applicationPages,
    keyPages,
    studentPages,
    usagePages,
    webhookPages,
    disclosurePages,
    deletionPages,
  ])
    await app.register(group, { context })
}
