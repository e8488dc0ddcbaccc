/**
 * Every dashboard address, with who may open it and whether it shows children's data, as the
 * page-group plugins register them. A route moved between plugins must keep its address (no
 * trailing-slash twin appears or goes), its role and its `studentData` flag; authorization.test.ts
 * then checks what each role gets from them.
 */
import Fastify, { type FastifyInstance } from 'fastify'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ManualClock } from '../../src/clock.js'
import { dashboardPlugin } from '../../src/dashboard/dashboard-plugin.js'
import { createLimiters, type Limiters } from '../../src/services/limiters.js'
import type { Storage } from '../../src/storage/connection.js'
import { createTestStorage, START, testConfig } from '../helper.js'

/** method, address, access, and `student` for the pages with `studentData: true`. */
const ROUTES = [
  'POST /dashboard/login/passkey/options public',
  'POST /dashboard/login/passkey public',
  'POST /dashboard/sign-in/code/passkey/options public',
  'POST /dashboard/sign-in/code/passkey public',
  'POST /dashboard/account/passkeys/options signed-in',
  'POST /dashboard/account/passkeys signed-in',
  'POST /dashboard/account/passkeys/:id/remove signed-in',
  'POST /dashboard/partner/members/two-step partner',
  'GET /dashboard/partner/members partner',
  'POST /dashboard/partner/members/invite partner',
  'POST /dashboard/partner/members/:accountId/role partner',
  'POST /dashboard/partner/members/:accountId/remove partner',
  'POST /dashboard/partner/members/invitations/:id/revoke partner',
  'POST /dashboard/partner/members/leave partner',
  'GET /dashboard/invitations/accept signed-in',
  'POST /dashboard/invitations/accept signed-in',
  'GET /dashboard/invitations/operator public',
  'POST /dashboard/invitations/operator public',
  'POST /dashboard/account/organisation signed-in',
  'GET /dashboard/account signed-in',
  'POST /dashboard/account/verify signed-in',
  'POST /dashboard/account/password signed-in',
  'POST /dashboard/account/email signed-in',
  'POST /dashboard/account/sessions/:id/end signed-in',
  'POST /dashboard/account/sign-out-everywhere signed-in',
  'POST /dashboard/account/notices signed-in',
  'GET /dashboard/account/two-step signed-in',
  'POST /dashboard/account/two-step/begin signed-in',
  'POST /dashboard/account/two-step/confirm signed-in',
  'POST /dashboard/account/two-step/recovery-codes signed-in',
  'POST /dashboard/account/two-step/remove signed-in',
  'GET /dashboard/account/confirm-email public',
  'POST /dashboard/account/confirm-email public',
  'GET /dashboard/forgot-password public',
  'POST /dashboard/forgot-password public',
  'GET /dashboard/reset-password public',
  'POST /dashboard/reset-password public',
  'GET /dashboard/verify-email public',
  'POST /dashboard/verify-email public',
  'GET /dashboard public',
  'GET /dashboard/assets/dashboard.css public',
  'GET /dashboard/assets/dashboard.js public',
  'GET /dashboard/login public',
  'GET /dashboard/operator operator',
  'GET /dashboard/operator/applications operator',
  'GET /dashboard/operator/audit operator student',
  'GET /dashboard/operator/disclosures operator student',
  'GET /dashboard/operator/disclosures.csv operator student',
  'GET /dashboard/operator/disclosures/export.csv operator student',
  'GET /dashboard/operator/disclosures/export.json operator student',
  'GET /dashboard/operator/ended-agreements operator',
  'GET /dashboard/operator/organisations operator',
  'GET /dashboard/operator/organisations/:id operator',
  'GET /dashboard/operator/organisations/:id/agreements/:agreementId/certificate.json operator student',
  'GET /dashboard/operator/organisations/:id/keys/:keyId/revoke operator',
  'GET /dashboard/operator/organisations/:id/shared operator student',
  'GET /dashboard/operator/organisations/:id/shares/:shareId/end operator',
  'GET /dashboard/operator/organisations/:id/students operator student',
  'GET /dashboard/operator/organisations/:id/students/:studentId/unlink operator student',
  'GET /dashboard/operator/organisations/:id/suspend operator',
  'GET /dashboard/operator/outbox operator',
  'GET /dashboard/operator/lti/scores operator student',
  'GET /dashboard/operator/lti operator',
  'POST /dashboard/operator/lti/links operator',
  'POST /dashboard/operator/lti/links/:id/revoke operator',
  'GET /dashboard/operator/lti/registrations/new operator',
  'POST /dashboard/operator/lti/registrations operator',
  'GET /dashboard/operator/lti/registrations/:id operator',
  'POST /dashboard/operator/lti/registrations/:id/activate operator',
  'GET /dashboard/operator/lti/registrations/:id/deactivate operator',
  'POST /dashboard/operator/lti/registrations/:id/deactivate operator',
  'POST /dashboard/operator/lti/registrations/:id/deployments operator',
  'POST /dashboard/operator/lti/registrations/:id/deployments/remove operator',
  'GET /dashboard/operator/lti/key/rotate operator',
  'POST /dashboard/operator/lti/key/rotate operator',
  'GET /dashboard/partner/lti partner',
  'GET /dashboard/operator/request-log operator',
  'GET /dashboard/operator/operators operator',
  'POST /dashboard/operator/operators/invite operator',
  'POST /dashboard/operator/operators/:accountId/role operator',
  'POST /dashboard/operator/operators/:accountId/remove operator',
  'POST /dashboard/operator/operators/invitations/:id/revoke operator',
  'GET /dashboard/operator/schools operator',
  'GET /dashboard/operator/roster operator',
  'GET /dashboard/operator/roster/:token operator',
  'GET /dashboard/operator/students operator student',
  'GET /dashboard/operator/students/:id/disclosures operator student',
  'GET /dashboard/operator/students/:id/disclosures.csv operator student',
  'GET /dashboard/operator/students/:id/disclosures.json operator student',
  'GET /dashboard/partner partner',
  'GET /dashboard/partner/application partner',
  'GET /dashboard/partner/deletion partner',
  'GET /dashboard/partner/deletion/:agreementId/attest partner',
  'GET /dashboard/partner/deletion/:agreementId/students.csv partner student',
  'GET /dashboard/partner/disclosures partner student',
  'GET /dashboard/partner/keys/:id/revoke partner',
  'GET /dashboard/partner/keys/:id/roll partner',
  'GET /dashboard/partner/keys/shown/:view partner',
  'GET /dashboard/partner/students partner student',
  'GET /dashboard/partner/request-log partner',
  'GET /dashboard/partner/usage partner',
  'GET /dashboard/partner/webhooks partner',
  'GET /dashboard/partner/webhooks/:id partner',
  'GET /dashboard/signup public',
  'POST /dashboard/login public',
  'POST /dashboard/logout public',
  'GET /dashboard/sign-in/code public',
  'POST /dashboard/sign-in/code public',
  'POST /dashboard/operator/applications/:id/approve operator',
  'POST /dashboard/operator/applications/:id/reject operator',
  'POST /dashboard/operator/organisations/:id/agreements operator',
  'POST /dashboard/operator/organisations/:id/agreements/:agreementId/end operator',
  'POST /dashboard/operator/organisations/:id/keys/:keyId/revoke operator',
  'POST /dashboard/operator/organisations/:id/reinstate operator',
  'POST /dashboard/operator/organisations/:id/shares/:shareId/end operator',
  'POST /dashboard/operator/organisations/:id/shares/list operator',
  'POST /dashboard/operator/organisations/:id/shares/school operator',
  'POST /dashboard/operator/organisations/:id/students/:studentId/unlink operator',
  'POST /dashboard/operator/organisations/:id/suspend operator',
  'POST /dashboard/operator/outbox/:id/send-again operator',
  'POST /dashboard/operator/outbox/test operator',
  'POST /dashboard/operator/lti/scores/:id/send-again operator',
  'POST /dashboard/operator/schools operator',
  'POST /dashboard/operator/roster operator',
  'POST /dashboard/operator/roster/:token/cancel operator',
  'POST /dashboard/operator/roster/:token/confirm operator',
  'POST /dashboard/operator/students/erase operator',
  'POST /dashboard/partner/application partner',
  'POST /dashboard/partner/deletion/:agreementId/attest partner',
  'POST /dashboard/partner/keys partner',
  'POST /dashboard/partner/keys/:id/revoke partner',
  'POST /dashboard/partner/keys/:id/roll partner',
  'POST /dashboard/partner/keys/shown/:view/hide partner',
  'POST /dashboard/partner/webhooks partner',
  'POST /dashboard/partner/webhooks/:id/deliveries/:delivery/resend partner',
  'POST /dashboard/partner/webhooks/:id/disable partner',
  'POST /dashboard/partner/webhooks/:id/enable partner',
  'POST /dashboard/partner/webhooks/:id/roll partner',
  'POST /dashboard/partner/webhooks/:id/test partner',
  'POST /dashboard/signup public',
]

describe('dashboard route table', () => {
  let storage: Storage
  let limiters: Limiters
  let app: FastifyInstance
  const routes: string[] = []

  beforeAll(async () => {
    storage = await createTestStorage({ catalog: false })
    const clock = new ManualClock(START)
    const config = testConfig()
    app = Fastify()
    limiters = await createLimiters(config, clock, app.log)
    app.addHook('onRoute', (route) => {
      // HEAD twins of GET routes follow them; the GET is what is listed.
      if (route.method === 'HEAD') return
      const { dashboard, studentData } = route.config ?? {}
      routes.push(`${String(route.method)} ${route.url} ${dashboard}${studentData === true ? ' student' : ''}`)
    })
    await app.register(dashboardPlugin, {
      prefix: '/dashboard',
      storage,
      clock,
      limiters,
      openApi: () => ({}),
      flushUsage: async () => {},
      maxKeysPerOrganisation: config.maxKeysPerOrganisation,
      maxWebhookEndpoints: config.maxWebhookEndpointsPerOrganisation,
      webhookAllowLoopback: config.webhookAllowLoopback,
      mail: { publicUrl: config.publicUrl, sending: false, held: undefined },
    })
    await app.ready()
  })
  afterAll(async () => {
    await app?.close()
    await limiters?.close()
    await storage?.close()
  })

  it('registers every address once, with its role and its student-data flag', () => {
    expect([...routes].sort()).toEqual([...ROUTES].sort())
  })

  // The three others are the pages of one organisation, one roster upload and one endpoint, reached with an empty id.
  it('answers a page address with a trailing slash only where a route matches it', async () => {
    const pages = ROUTES.filter((route) => route.startsWith('GET ') && !route.includes(':'))
    const statuses = await Promise.all(
      pages.map(async (route) => {
        const url = `${route.split(' ')[1]}/`
        return `${url} ${(await app.inject({ method: 'GET', url })).statusCode}`
      }),
    )
    expect(statuses.filter((status) => !status.endsWith(' 404'))).toEqual([
      '/dashboard/ 303',
      '/dashboard/operator/organisations/ 303',
      '/dashboard/operator/roster/ 303',
      '/dashboard/partner/webhooks/ 303',
    ])
  })
})
