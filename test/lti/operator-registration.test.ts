/**
 * An operator's registrations through the dashboard, on both engines: a platform registered by
 * hand, and registered dynamically through a URL the operator made, each pending until activated
 * on its page; activations racing on one registration make one activation, one share and one
 * audit row, the others told it is active already.
 */
import { describe, expect, it } from 'vitest'
import { deploymentsOf, listRegistrations, registrationById } from '../../src/storage/lti-registration-repository.js'
import { buildTestApp } from '../helper.js'
import { perTest } from '../support/built.js'
import { TestPlatform } from '../support/lti-platform.js'
import { type DashboardClient, signedInOperator } from '../dashboard/dashboard-client.js'

const LTI = '/dashboard/operator/lti'

describe('registrations made and activated by the operator', () => {
  const t = perTest(() => buildTestApp({ env: { LTI_ALLOW_LOOPBACK: 'true' } }))

  async function activateRacing(operator: DashboardClient, id: string) {
    const answers = await Promise.all(
      Array.from({ length: 4 }, () => operator.post(`${LTI}/registrations/${id}/activate`)),
    )
    expect(answers.map((a) => a.statusCode).sort()).toEqual([303, 409, 409, 409])
    const row = (await registrationById(t.storage.db, id))!
    expect(row.status).toBe('active')
    const shares = await t.storage.db.selectFrom('shares').selectAll().where('id', '=', row.share_id!).execute()
    expect(shares).toHaveLength(1)
    const audit = await t.storage.db.selectFrom('audit_log').selectAll().where('action', '=', 'lti.activate').execute()
    expect(audit).toHaveLength(1)
  }

  it('registers a platform by hand, pending until one of racing activations makes it active', async () => {
    const operator = await signedInOperator(t, '192.0.2.91', (request) => t.send(request))
    const made = await operator.post(`${LTI}/registrations`, {
      name: 'Hillside Schoology',
      organisation: t.fixtures.orgs.acme,
      school: '',
      issuer: 'https://schoology.schoology.com',
      clientId: '7150123456',
      deploymentIds: '7150123456-1234\n7150123456-5678',
      authLoginUrl: 'https://lti-service.svc.schoology.com/lti-service/authorize-redirect',
      tokenUrl: 'https://lti-service.svc.schoology.com/lti-service/access-token',
      tokenAudience: '',
      jwksUri: 'https://lti-service.svc.schoology.com/lti-service/.well-known/jwks',
    })
    expect(made.statusCode).toBe(303)
    const [row] = await listRegistrations(t.storage.db)
    expect(row).toMatchObject({ method: 'manual', status: 'pending', issuer: 'https://schoology.schoology.com' })
    expect(await deploymentsOf(t.storage.db, row!.id)).toEqual(['7150123456-1234', '7150123456-5678'])
    await activateRacing(operator, row!.id)
  })

  it('registers the test platform through a URL the operator made, then activates it on its page', async () => {
    const platform = await new TestPlatform().start()
    try {
      const operator = await signedInOperator(t, '192.0.2.92', (request) => t.send(request))
      const made = await operator.post(`${LTI}/links`, { organisation: t.fixtures.orgs.acme, school: '' })
      const url = /id="registration-url" class="secret" readonly value="([^"]+)"/.exec(made.body)![1]!
      const opened = new URL(platform.registrationUrl(url))
      const answer = await t.send({ url: `${opened.pathname}${opened.search}` })
      expect(answer.statusCode).toBe(200)
      const [row] = await listRegistrations(t.storage.db)
      expect(row).toMatchObject({ method: 'dynamic', status: 'pending', client_id: platform.clientId })
      await activateRacing(operator, row!.id)
    } finally {
      await platform.stop()
    }
  })
})
