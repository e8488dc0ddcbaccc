/**
 * Scores for the platforms' gradebooks (Assignment and Grade Services), end to end against the
 * test platform, on both engines: what a progress change queues (timestamps only increasing, a
 * newer score replacing a waiting one), what the platform receives (the payloads exactly, the
 * media type, a bearer token got with our client assertion), the token kept and renewed, 401,
 * 5xx, network and 4xx answers, access checked at each send (no agreement, a deactivated
 * registration), one disclosure row per score the platform got, and erasure.
 */
import { afterEach, describe, expect, it } from 'vitest'
import { endAgreements } from '../../src/cases/agreement-end.js'
import { eraseStudents } from '../../src/cases/erasure.js'
import { deactivateRegistration } from '../../src/cases/lti-registrations.js'
import {
  claimScores,
  NO_LINE_ITEM,
  REGISTRATION_INACTIVE,
  recordScoreAttempt,
  SUPERSEDED,
  sendScoreAgain,
} from '../../src/cases/lti-scores.js'
import { loadToolKey } from '../../src/cases/lti-tool-key.js'
import { isoAt } from '../../src/clock.js'
import { AGS_SCOPE, SCORE_MEDIA_TYPE } from '../../src/domain/lti-claims.js'
import { MAX_SCORE_ATTEMPTS } from '../../src/domain/lti-score.js'
import { RETRY_DELAYS_MS } from '../../src/domain/webhook-events.js'
import { LtiScoreSender } from '../../src/services/lti-score-sender.js'
import { toolKeys } from '../../src/services/lti-tool-keys.js'
import { listAudit } from '../../src/storage/audit-repository.js'
import { listDisclosures } from '../../src/storage/disclosure-log.js'
import { DisclosureDescriber } from '../../src/storage/disclosure-report-repository.js'
import { buildTestApp, type TestContext } from '../helper.js'
import { columnsHolding } from '../support/database-scan.js'
import type { TestPlatform } from '../support/lti-platform.js'
import { OPERATOR } from '../support/lti.js'
import {
  LESSON,
  launchedStudent,
  OTHER_LESSON,
  placeLesson,
  queueChange,
  type ScoreSetting,
  scorePlatform,
  scoreRows,
} from '../support/lti-scores.js'

const SECOND = 1000
const MINUTE = 60 * SECOND
const HOUR = 60 * MINUTE

describe('scores for the platforms’ gradebooks', () => {
  let t: TestContext
  const platforms: TestPlatform[] = []
  afterEach(async () => {
    for (const platform of platforms.splice(0)) await platform.stop()
    await t?.close()
  })

  async function setUp(organisation?: (t: TestContext) => string, options: { activate?: boolean } = {}) {
    t = await buildTestApp({ env: { LTI_ALLOW_LOOPBACK: 'true' } })
    const setting = await scorePlatform(t, organisation?.(t), options)
    platforms.push(setting.platform)
    return setting
  }

  /** One student of the setting's registration, with LESSON placed as `link-1` on the platform's line item. */
  async function withStudent(setting: ScoreSetting, sub = 'learner-1') {
    const studentId = await launchedStudent(t, setting.registration, sub)
    if ((await t.storage.db.selectFrom('lti_resource_links').select('resource_link_id').execute()).length === 0)
      await placeLesson(t.storage, setting.registration, { id: 'link-1', lineItem: setting.lineItem }, t.clock.now())
    return studentId
  }

  const run = () => t.app.services.ltiScores.run()
  const disclosures = () => listDisclosures(t.storage.db, { action: 'lti.score' })

  it('sends an in-progress and a completed score exactly, with a token got by our signed assertion, each disclosed once', async () => {
    const setting = await setUp()
    const { platform, registration, lineItem } = setting
    const studentId = await withStudent(setting)
    const started = t.clock.now()
    expect(await queueChange(t.storage, { studentId, lessonSlug: LESSON, status: 'in_progress', at: started })).toBe(1)
    expect(await run()).toBe(1)
    t.clock.advance(MINUTE)
    const completed = t.clock.now()
    const quiz = { right: 2, total: 3 }
    expect(
      await queueChange(t.storage, { studentId, lessonSlug: LESSON, status: 'completed', at: completed, quiz }),
    ).toBe(1)
    expect(await run()).toBe(1)

    expect(platform.scores.map((score) => score.body)).toEqual([
      { userId: 'learner-1', activityProgress: 'InProgress', gradingProgress: 'Pending', timestamp: isoAt(started) },
      {
        userId: 'learner-1',
        scoreGiven: 67,
        scoreMaximum: 100,
        activityProgress: 'Completed',
        gradingProgress: 'FullyGraded',
        timestamp: isoAt(completed),
      },
    ])
    for (const score of platform.scores) {
      expect(score.lineItem).toBe(lineItem)
      expect(score.contentType).toBe(SCORE_MEDIA_TYPE)
      expect(score.authorization).toMatch(/^Bearer access-/)
    }
    // One token for both: the second score came a minute later, well within its hour.
    expect(platform.tokens).toHaveLength(1)
    const [token] = platform.tokens
    const key = await loadToolKey(t.storage.db)
    expect(token!.header).toMatchObject({ alg: 'RS256', kid: key.publicJwk.kid })
    expect(token!.assertion).toMatchObject({
      iss: platform.clientId,
      sub: platform.clientId,
      aud: `${platform.origin}/token`,
      iat: Math.floor(started / 1000),
    })
    expect(token!.assertion.jti).toEqual(expect.any(String))
    expect(token!.assertion.exp! - token!.assertion.iat!).toBeLessThanOrEqual(300)
    expect(token!.scope.split(' ')).toContain(AGS_SCOPE.score)

    const rows = await scoreRows(t.storage)
    expect(rows.map((row) => [row.state, row.attempts, row.last_status])).toEqual([
      ['sent', 1, 200],
      ['sent', 1, 200],
    ])
    const disclosed = await disclosures()
    expect(
      disclosed
        .map((row) => ({
          request: row.request_id,
          key: row.key_id,
          organisation: row.organisation_id,
          student: row.student_id,
          outcome: row.outcome,
        }))
        .reverse(),
    ).toEqual(
      rows.map((row) => ({
        request: row.id,
        key: `lti:${registration.id}`,
        organisation: t.fixtures.orgs.acme,
        student: studentId,
        outcome: 'disclosed',
      })),
    )
    // The disclosure report names the platform and what it was told.
    const [described] = await new DisclosureDescriber(t.storage.db).describe(disclosed.slice(0, 1))
    expect(described!.by).toEqual({
      kind: 'lti',
      registrationId: registration.id,
      platform: 'Test platform',
      issuer: platform.issuer,
    })
    expect(described!.data).toEqual(['progress'])
    // Nothing is left to send.
    expect(await run()).toBe(0)
  })

  it('queues only newer timestamps per target, and a newer score replaces one still waiting', async () => {
    const setting = await setUp()
    const studentId = await withStudent(setting)
    const change = (at: number, status: 'in_progress' | 'completed' = 'in_progress') =>
      queueChange(t.storage, { studentId, lessonSlug: LESSON, status, at })
    const t1 = t.clock.now()
    expect(await change(t1)).toBe(1)
    expect(await change(t1 - SECOND)).toBe(0)
    expect(await change(t1, 'completed')).toBe(0)
    t.clock.advance(SECOND)
    const t2 = t.clock.now()
    expect(await change(t2, 'completed')).toBe(1)
    expect((await scoreRows(t.storage)).map((row) => [row.timestamp, row.state, row.last_error])).toEqual([
      [isoAt(t1), 'cancelled', SUPERSEDED],
      [isoAt(t2), 'pending', null],
    ])
    expect(await run()).toBe(1)
    expect(setting.platform.scores.map((score) => score.body.timestamp)).toEqual([isoAt(t2)])
    // Older than what was sent: nothing.
    expect(await change(t2 - 500)).toBe(0)

    // A score being sent when a newer one is queued is left to its sender; if it must be tried
    // again, the next claim finds the newer one and cancels it rather than go back in time.
    t.clock.advance(SECOND)
    const t3 = t.clock.now()
    expect(await change(t3)).toBe(1)
    const { due } = await claimScores(t.storage.db, t.clock.now(), MINUTE, 10)
    expect(due.map((score) => score.timestamp)).toEqual([isoAt(t3)])
    t.clock.advance(SECOND)
    const t4 = t.clock.now()
    expect(await change(t4, 'completed')).toBe(1)
    const retry = { stage: 'score' as const, status: 503, error: null, response: '' }
    expect(await recordScoreAttempt(t.storage.db, due[0]!, retry, t.clock.now())).toEqual({
      state: 'pending',
      recorded: true,
    })
    expect(await run()).toBe(1)
    t.clock.advance(RETRY_DELAYS_MS[0])
    expect(await run()).toBe(0)
    const rows = await scoreRows(t.storage)
    expect(rows.map((row) => [row.timestamp, row.state])).toEqual([
      [isoAt(t1), 'cancelled'],
      [isoAt(t2), 'sent'],
      [isoAt(t3), 'cancelled'],
      [isoAt(t4), 'sent'],
    ])
    expect(rows[2]!.last_error).toBe(SUPERSEDED)
    expect(setting.platform.scores.map((score) => score.body.timestamp)).toEqual([isoAt(t2), isoAt(t4)])
  })

  it('keeps one token per registration until shortly before it expires, and after a 401 gets one new token and tries once more', async () => {
    const setting = await setUp()
    const { platform } = setting
    const students = [await withStudent(setting, 'learner-1'), await withStudent(setting, 'learner-2')]
    await placeLesson(t.storage, setting.registration, { id: 'link-2', lineItem: setting.lineItem }, t.clock.now())
    let at = t.clock.now()
    const changes = async () => {
      at = t.clock.now()
      let queued = 0
      for (const studentId of students)
        queued += await queueChange(t.storage, { studentId, lessonSlug: LESSON, status: 'in_progress', at })
      return queued
    }
    expect(await changes()).toBe(4)
    expect(await run()).toBe(4)
    expect(platform.scores).toHaveLength(4)
    expect(platform.tokens).toHaveLength(1)

    // The platform's token lives an hour; it is dropped a minute before.
    t.clock.advance(HOUR - 2 * MINUTE)
    expect(await changes()).toBe(4)
    await run()
    expect(platform.tokens).toHaveLength(1)
    t.clock.advance(MINUTE)
    expect(await changes()).toBe(4)
    await run()
    expect(platform.tokens).toHaveLength(2)

    // Revoked early: one 401, a new token, the same attempt succeeds.
    const kept = platform.scores.at(-1)!.authorization!.slice('Bearer '.length)
    platform.expiredTokens.add(kept)
    t.clock.advance(SECOND)
    expect(await changes()).toBe(4)
    await run()
    expect(platform.tokens).toHaveLength(3)
    expect(platform.scores).toHaveLength(16)
    const latest = (await scoreRows(t.storage)).filter((row) => row.timestamp === isoAt(at))
    expect(latest.map((row) => [row.state, row.attempts])).toEqual(Array(4).fill(['sent', 1]))

    // Refused with the new token too: failed, and the platform never read it (no disclosure).
    t.clock.advance(SECOND)
    platform.failScores(401, 401)
    expect(
      await queueChange(t.storage, { studentId: students[0]!, lessonSlug: OTHER_LESSON, status: 'in_progress', at }),
    ).toBe(0)
    await placeLesson(
      t.storage,
      setting.registration,
      { id: 'link-3', lesson: OTHER_LESSON, lineItem: setting.lineItem },
      t.clock.now(),
    )
    const before = (await disclosures()).length
    expect(
      await queueChange(t.storage, {
        studentId: students[0]!,
        lessonSlug: OTHER_LESSON,
        status: 'in_progress',
        at: t.clock.now(),
      }),
    ).toBe(1)
    expect(await run()).toBe(1)
    expect(platform.tokens).toHaveLength(4)
    const refused = (await scoreRows(t.storage)).at(-1)!
    expect(refused).toMatchObject({ state: 'failed', attempts: 1, last_status: 401, first_sent_at: null })
    expect(await disclosures()).toHaveLength(before)
  })

  it('tries 5xx answers, resets and token failures again on the schedule, and gives up after the last attempt', async () => {
    const setting = await setUp()
    const { platform } = setting
    const studentId = await withStudent(setting)
    platform.failScores(500, 503)
    platform.scoreFailures.push('reset')
    await queueChange(t.storage, { studentId, lessonSlug: LESSON, status: 'completed', at: t.clock.now() })
    const score = async () => (await scoreRows(t.storage)).at(-1)!

    expect(await run()).toBe(1)
    expect(await score()).toMatchObject({
      state: 'pending',
      attempts: 1,
      last_status: 500,
      next_attempt_at: isoAt(t.clock.now() + RETRY_DELAYS_MS[0]),
    })
    expect((await score()).last_response).toContain('failing on demand with 500')
    // Not due yet: nothing is sent, and no time passes in the test but by the clock.
    expect(await run()).toBe(0)
    t.clock.advance(RETRY_DELAYS_MS[0])
    expect(await run()).toBe(1)
    expect(await score()).toMatchObject({
      state: 'pending',
      attempts: 2,
      last_status: 503,
      next_attempt_at: isoAt(t.clock.now() + RETRY_DELAYS_MS[1]),
    })
    t.clock.advance(RETRY_DELAYS_MS[1])
    expect(await run()).toBe(1)
    expect(await score()).toMatchObject({
      state: 'pending',
      attempts: 3,
      last_status: null,
      next_attempt_at: isoAt(t.clock.now() + RETRY_DELAYS_MS[2]),
    })
    expect((await score()).last_error).not.toBeNull()
    t.clock.advance(RETRY_DELAYS_MS[2])
    expect(await run()).toBe(1)
    expect(await score()).toMatchObject({ state: 'sent', attempts: 4, last_status: 200 })
    expect(platform.scores).toHaveLength(1)
    // The platform got it at the first 500 already: one row, as for a webhook answered with an error.
    expect((await disclosures()).map((row) => row.outcome)).toEqual(['sent_unacknowledged'])

    // No token to be had: tried again later, the token endpoint's answer kept.
    t.clock.advance(SECOND)
    platform.tokenFailures.push(503)
    await t.app.services.ltiScores.tokens.drop(setting.registration.id, platform.scores[0]!.authorization!.slice(7))
    await queueChange(t.storage, { studentId, lessonSlug: LESSON, status: 'completed', at: t.clock.now() })
    expect(await run()).toBe(1)
    expect(await score()).toMatchObject({ state: 'pending', attempts: 1, last_status: 503 })
    expect((await score()).last_error).toContain('token endpoint')
    t.clock.advance(RETRY_DELAYS_MS[0])
    expect(await run()).toBe(1)
    expect(await score()).toMatchObject({ state: 'sent', attempts: 2 })

    // A platform that keeps failing: failed after the last attempt of the schedule.
    t.clock.advance(SECOND)
    platform.failScores(...Array<number>(MAX_SCORE_ATTEMPTS).fill(502))
    await queueChange(t.storage, { studentId, lessonSlug: LESSON, status: 'completed', at: t.clock.now() })
    for (let attempt = 1; attempt <= MAX_SCORE_ATTEMPTS; attempt++) {
      expect(await run()).toBe(1)
      if (attempt < MAX_SCORE_ATTEMPTS) t.clock.advance(RETRY_DELAYS_MS[attempt - 1]!)
    }
    expect(await score()).toMatchObject({
      state: 'failed',
      attempts: MAX_SCORE_ATTEMPTS,
      last_status: 502,
      next_attempt_at: null,
    })
    t.clock.advance(HOUR)
    expect(await run()).toBe(0)
    expect(platform.scores).toHaveLength(2)
  })

  it('fails a score the platform refuses (4xx) at once, keeping its answer, and sends it again when an operator asks', async () => {
    const setting = await setUp()
    const studentId = await withStudent(setting)
    setting.platform.failScores(422)
    await queueChange(t.storage, { studentId, lessonSlug: LESSON, status: 'completed', at: t.clock.now() })
    expect(await run()).toBe(1)
    const [failed] = await scoreRows(t.storage)
    expect(failed).toMatchObject({ state: 'failed', attempts: 1, last_status: 422, next_attempt_at: null })
    expect(failed!.last_response).toContain('failing on demand with 422')
    expect(setting.platform.scores).toHaveLength(0)

    // Only a failed score is sent again; each resend is audited.
    await sendScoreAgain(t.storage.db, failed!.id, t.clock.now(), OPERATOR)
    await expect(sendScoreAgain(t.storage.db, failed!.id, t.clock.now(), OPERATOR)).rejects.toThrow(/only a failed/)
    expect(await run()).toBe(1)
    expect((await scoreRows(t.storage))[0]).toMatchObject({ state: 'sent', attempts: 1, last_status: 200 })
    expect(setting.platform.scores).toHaveLength(1)
    const audit = (await listAudit(t.storage.db)).filter((row) => row.action === 'lti.score.resend')
    expect(audit.map((row) => [row.actor, row.target])).toEqual([[OPERATOR.actor, `lti-score:${failed!.id}`]])
    // One disclosure for the score, made when the platform first got it.
    expect((await disclosures()).map((row) => [row.request_id, row.outcome])).toEqual([
      [failed!.id, 'sent_unacknowledged'],
    ])
  })

  it('keeps the line item URL’s query, sends one score per resource link of the lesson, none without a line item', async () => {
    const setting = await setUp()
    const { platform, registration } = setting
    const studentId = await withStudent(setting)
    const withQuery = `${platform.origin}/contexts/course-1/lineitems/2?type_id=7`
    await placeLesson(t.storage, registration, { id: 'link-2', lineItem: withQuery }, t.clock.now())
    await placeLesson(t.storage, registration, { id: 'link-3', lineItem: null }, t.clock.now())
    await placeLesson(
      t.storage,
      registration,
      { id: 'link-4', lesson: OTHER_LESSON, lineItem: withQuery },
      t.clock.now(),
    )
    // Another platform's course has the lesson too, but the student never came from there.
    const other = await scorePlatform(t)
    platforms.push(other.platform)
    await placeLesson(t.storage, other.registration, { id: 'link-1', lineItem: other.lineItem }, t.clock.now())

    expect(
      await queueChange(t.storage, { studentId, lessonSlug: LESSON, status: 'in_progress', at: t.clock.now() }),
    ).toBe(2)
    expect(await run()).toBe(2)
    expect(platform.scores.map((score) => score.lineItem).sort()).toEqual(
      [setting.lineItem, `${platform.origin}/contexts/course-1/lineitems/2/scores?type_id=7`].sort(),
    )
    expect(other.platform.scores).toHaveLength(0)

    // A link that loses its line item after queueing: the score fails, saying why.
    t.clock.advance(SECOND)
    await queueChange(t.storage, { studentId, lessonSlug: LESSON, status: 'completed', at: t.clock.now() })
    await t.storage.db
      .updateTable('lti_resource_links')
      .set({ line_item_url: null })
      .where('resource_link_id', '=', 'link-2')
      .execute()
    await run()
    const rows = await scoreRows(t.storage)
    expect(rows.filter((row) => row.resource_link_id === 'link-2').map((row) => [row.state, row.last_error])).toEqual([
      ['sent', null],
      ['failed', NO_LINE_ITEM],
    ])
  })

  it('sends nothing while the organisation has no agreement in force: the score is cancelled and the refusal disclosed', async () => {
    const setting = await setUp((t) => t.fixtures.orgs.gamma)
    const studentId = await withStudent(setting)
    await queueChange(t.storage, { studentId, lessonSlug: LESSON, status: 'completed', at: t.clock.now() })
    expect(await run()).toBe(0)
    expect((await scoreRows(t.storage)).map((row) => [row.state, row.last_error])).toEqual([
      ['cancelled', 'no data-sharing agreement is in force'],
    ])
    expect(setting.platform.tokens).toHaveLength(0)
    expect(setting.platform.scores).toHaveLength(0)
    expect((await disclosures()).map((row) => [row.outcome, row.key_id, row.organisation_id])).toEqual([
      ['denied_agreement', `lti:${setting.registration.id}`, t.fixtures.orgs.gamma],
    ])
  })

  it('checks the agreement when sending, not only when queueing', async () => {
    const setting = await setUp()
    const studentId = await withStudent(setting)
    await queueChange(t.storage, { studentId, lessonSlug: LESSON, status: 'completed', at: t.clock.now() })
    await endAgreements(t.storage.db, { organisationId: t.fixtures.orgs.acme }, t.clock.now())
    t.clock.advance(SECOND)
    expect(await run()).toBe(0)
    expect(setting.platform.scores).toHaveLength(0)
    expect((await disclosures()).map((row) => row.outcome)).toEqual(['denied_agreement'])
  })

  it('sends nothing once the registration is deactivated', async () => {
    const setting = await setUp()
    const studentId = await withStudent(setting)
    await queueChange(t.storage, { studentId, lessonSlug: LESSON, status: 'in_progress', at: t.clock.now() })
    await deactivateRegistration(t.storage.db, setting.registration.id, OPERATOR, t.clock)
    expect(await run()).toBe(0)
    expect((await scoreRows(t.storage)).map((row) => [row.state, row.last_error])).toEqual([
      ['cancelled', REGISTRATION_INACTIVE],
    ])
    t.clock.advance(SECOND)
    expect(
      await queueChange(t.storage, { studentId, lessonSlug: LESSON, status: 'completed', at: t.clock.now() }),
    ).toBe(0)
    expect(setting.platform.tokens).toHaveLength(0)
    expect(setting.platform.scores).toHaveLength(0)
    expect(await disclosures()).toHaveLength(0)
  })

  it('erases a student’s LTI identity and scores with the student; the disclosure rows keep the id only', async () => {
    const setting = await setUp()
    const marker = 'sub-marker-5b1e9c'
    const studentId = await withStudent(setting, marker)
    const other = await withStudent(setting, 'learner-kept')
    await queueChange(t.storage, { studentId, lessonSlug: LESSON, status: 'in_progress', at: t.clock.now() })
    await run()
    t.clock.advance(SECOND)
    for (const id of [studentId, other])
      await queueChange(t.storage, { studentId: id, lessonSlug: LESSON, status: 'completed', at: t.clock.now() })
    expect((await columnsHolding(t.storage, marker)).sort()).toEqual(['lti_scores.payload', 'lti_students.sub'])

    await eraseStudents(t.storage.db, [studentId], t.clock.now())
    expect(await columnsHolding(t.storage, marker)).toEqual([])
    const left = await scoreRows(t.storage)
    expect(left.map((row) => row.student_id)).toEqual([other])
    expect(
      await t.storage.db.selectFrom('lti_students').select('student_id').where('student_id', '=', studentId).execute(),
    ).toEqual([])
    expect(await run()).toBe(1)
    expect(setting.platform.scores.map((score) => score.body.userId)).toEqual([marker, 'learner-kept'])
    expect((await disclosures()).map((row) => row.student_id).sort()).toEqual([studentId, other].sort())
  })

  it('sends each score once when two instances send at the same moment', async () => {
    const setting = await setUp()
    const students: string[] = []
    for (let i = 0; i < 6; i++) students.push(await withStudent(setting, `learner-${i}`))
    for (const studentId of students)
      await queueChange(t.storage, { studentId, lessonSlug: LESSON, status: 'completed', at: t.clock.now() })
    const second = new LtiScoreSender({
      db: t.storage.db,
      clock: t.clock,
      log: t.app.log,
      toolKeys: toolKeys(t.storage.db, t.clock),
      allowLoopback: true,
      concurrency: 2,
    })
    try {
      const [a, b] = await Promise.all([run(), second.run()])
      expect(a + b).toBe(6)
    } finally {
      await second.stop()
    }
    expect(setting.platform.scores.map((score) => score.body.userId).sort()).toEqual(
      students.map((_, i) => `learner-${i}`),
    )
    expect(await disclosures()).toHaveLength(6)
  })
})
