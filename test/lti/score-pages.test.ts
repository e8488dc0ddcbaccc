/**
 * The operator's LTI scores page over a real socket, on both engines: every score with its
 * platform, lesson, student, state and attempts; a failed one with the platform's answer and a
 * "Send again" button that queues it again, audited; filters by state and pages newest first;
 * operators only, and only from the dashboard itself (it shows children's scores).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { listAudit } from '../../src/storage/audit-repository.js'
import { buildTestApp, type TestContext } from '../helper.js'
import { type DashboardClient, OPERATOR, signedInOperator } from '../dashboard/dashboard-client.js'
import {
  LESSON,
  launchedStudent,
  placeLesson,
  queueChange,
  type ScoreSetting,
  scorePlatform,
  scoreRows,
} from '../support/lti-scores.js'

const SCORES = '/dashboard/operator/lti/scores'

describe('the LTI scores page', () => {
  let t: TestContext
  let setting: ScoreSetting
  let operator: DashboardClient
  let studentId: string

  beforeAll(async () => {
    t = await buildTestApp({ env: { LTI_ALLOW_LOOPBACK: 'true' } })
    setting = await scorePlatform(t)
    studentId = await launchedStudent(t, setting.registration, 'learner-1')
    await placeLesson(t.storage, setting.registration, { id: 'link-1', lineItem: setting.lineItem }, t.clock.now())
    operator = await signedInOperator(t, '192.0.2.70', t.send)
  })
  afterAll(async () => {
    await setting?.platform.stop()
    await t?.close()
  })

  it('says when there is no score yet', async () => {
    const page = await operator.get(SCORES)
    expect(page.statusCode).toBe(200)
    expect(page.body).toContain('No score yet.')
    expect(page.body).toContain('No score is queued.')
  })

  it('lists a sent score and a failed one with the platform’s answer and a Send again button that is audited', async () => {
    await queueChange(t.storage, { studentId, lessonSlug: LESSON, status: 'in_progress', at: t.clock.now() })
    await t.app.services.ltiScores.run()
    t.clock.advance(60_000)
    setting.platform.failScores(422)
    await queueChange(t.storage, { studentId, lessonSlug: LESSON, status: 'completed', at: t.clock.now() })
    await t.app.services.ltiScores.run()
    const [sent, failed] = await scoreRows(t.storage)
    expect([sent!.state, failed!.state]).toEqual(['sent', 'failed'])

    const page = await operator.get(SCORES)
    expect(page.statusCode).toBe(200)
    expect(page.body).toContain('Scores: 1 sent, 1 failed.')
    expect(page.body).toContain('Test platform')
    expect(page.body).toContain(LESSON)
    expect(page.body).toContain(`/dashboard/operator/students/${studentId}/disclosures`)
    expect(page.body).toContain('in progress')
    expect(page.body).toContain('completed: 100 of 100')
    expect(page.body).toContain('HTTP 422')
    expect(page.body).toContain('failing on demand with 422')
    // One button, for the failed score only.
    expect(page.body.match(/Send again<span/g)).toHaveLength(1)
    expect(page.body).toContain(`${SCORES}/${failed!.id}/send-again`)

    const failedOnly = await operator.get(`${SCORES}?state=failed`)
    expect(failedOnly.body).toContain(failed!.id)
    expect(failedOnly.body).not.toContain(`(score ${sent!.id})`)
    expect(failedOnly.body).toContain('HTTP 422')

    const again = await operator.post(`${SCORES}/${failed!.id}/send-again`)
    expect(again.statusCode).toBe(303)
    expect(again.headers.location).toBe(`${SCORES}?again=${failed!.id}`)
    expect((await operator.get(again.headers.location as string)).body).toContain(
      `Score ${failed!.id} was queued again`,
    )
    expect((await scoreRows(t.storage))[1]).toMatchObject({ state: 'pending', attempts: 0 })
    const audit = (await listAudit(t.storage.db)).filter((row) => row.action === 'lti.score.resend')
    expect(audit.map((row) => [row.actor, row.target])).toEqual([
      [`account:${OPERATOR.email}`, `lti-score:${failed!.id}`],
    ])

    // Pending now: sending it again is a conflict; an unknown score is not found.
    expect((await operator.post(`${SCORES}/${failed!.id}/send-again`)).statusCode).toBe(409)
    expect((await operator.post(`${SCORES}/99999999-9999-4999-8999-999999999999/send-again`)).statusCode).toBe(404)
    expect((await operator.post(`${SCORES}/not-a-score/send-again`)).statusCode).toBe(404)
    await t.app.services.ltiScores.run()
    expect((await scoreRows(t.storage))[1]).toMatchObject({ state: 'sent' })
  })

  it('pages newest first, and refuses a page or state it does not know', async () => {
    for (let i = 0; i < 55; i++) {
      t.clock.advance(1000)
      await queueChange(t.storage, { studentId, lessonSlug: LESSON, status: 'in_progress', at: t.clock.now() })
    }
    const first = await operator.get(SCORES)
    const older = /<a rel="next" href="([^"]+)"/.exec(first.body)?.[1]?.replaceAll('&amp;', '&')
    expect(older).toMatch(/^\/dashboard\/operator\/lti\/scores\?before=/)
    const second = await operator.get(older!)
    expect(second.statusCode).toBe(200)
    expect(second.body).not.toContain('rel="next"')
    const rows = (body: string) => body.match(/<tr><td>/g)?.length ?? 0
    expect(rows(first.body) + rows(second.body)).toBe((await scoreRows(t.storage)).length)
    expect((await operator.get(`${SCORES}?state=lost`)).statusCode).toBe(400)
    expect((await operator.get(`${SCORES}?before=yesterday`)).statusCode).toBe(400)
  })

  it('opens for operators only, and not from another site', async () => {
    const anonymous = await t.send({ url: SCORES })
    expect(anonymous.statusCode).toBe(303)
    const crossSite = await operator.get(SCORES, {
      'sec-fetch-site': 'cross-site',
      'sec-fetch-mode': 'navigate',
      'sec-fetch-dest': 'document',
    })
    expect(crossSite.body).toContain('You came here from another site or app.')
    expect(crossSite.body).not.toContain(studentId)
  })
})
