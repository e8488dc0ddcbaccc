/**
 * The progress the lesson player records, on both engines over real sockets: started at the
 * launch, time between pages capped per page, XP by the rule of domain/lesson-xp.ts, completed
 * at the finish and never undone; the same progress the partner API, the change feed and a
 * webhook endpoint of the registration's organisation then serve. Pages posted twice at once
 * count once.
 */
import { afterEach, describe, expect, it } from 'vitest'
import { eraseStudents } from '../../src/cases/erasure.js'
import type { Slide } from '../../src/catalog/slides.js'
import { STEP_CAP_MS } from '../../src/domain/lesson-steps.js'
import { lessonXpMax } from '../../src/domain/lesson-xp.js'
import type { ProgressEntry } from '../../src/domain/progress.js'
import { lessonBySlug } from '../../src/storage/catalog-repository.js'
import { listDisclosures } from '../../src/storage/disclosure-log.js'
import { upsertProgress } from '../../src/storage/student-import-repository.js'
import { createEndpoint } from '../../src/storage/webhook-endpoint-repository.js'
import { WebhookDeliverer } from '../../src/webhooks/webhook-deliverer.js'
import { bearer, buildTestApp, type TestContext } from '../helper.js'
import { formOf } from '../support/lti-platform.js'
import { ALL_KINDS_LESSON, PlayerFixture, playerForm, textOf } from '../support/lti-player.js'
import { Receiver } from '../support/webhook-receiver.js'

const SECOND = 1000

describe('progress recorded by the lesson player', () => {
  let t: TestContext
  let player: PlayerFixture
  let receiver: Receiver | undefined
  afterEach(async () => {
    await receiver?.stop()
    receiver = undefined
    await player?.stop()
    await t?.close()
  })

  async function setUp() {
    t = await buildTestApp({ env: { LTI_ALLOW_LOOPBACK: 'true' } })
    player = await new PlayerFixture(t).start()
    const slides = JSON.parse((await lessonBySlug(t.storage.db, ALL_KINDS_LESSON))!.slides) as Slide[]
    const quizIndex = slides.findIndex((slide) => slide.type === 'quiz')
    return { slides, quizIndex, quiz: slides[quizIndex] as Extract<Slide, { type: 'quiz' }> }
  }

  /** The learner's entry of the lesson as the partner API serves it to the organisation's key. */
  async function apiEntry(studentId: string): Promise<ProgressEntry | undefined> {
    const response = await t.call({
      url: `/api/v1/students/${studentId}/progress`,
      headers: bearer(t.fixtures.keys.read),
    })
    expect(response.statusCode).toBe(200)
    return (response.json().progress as ProgressEntry[]).find((entry) => entry.lessonSlug === ALL_KINDS_LESSON)
  }

  async function storedEntry(studentId: string) {
    return t.storage.db
      .selectFrom('progress')
      .selectAll()
      .where('student_id', '=', studentId)
      .where('lesson_slug', '=', ALL_KINDS_LESSON)
      .executeTakeFirst()
  }

  async function changesOf(studentId: string) {
    return t.storage.db
      .selectFrom('student_changes')
      .selectAll()
      .where('student_id', '=', studentId)
      .where('kind', '=', 'progress_updated')
      .orderBy('seq')
      .execute()
  }

  /** A learner working through the lesson: the page now shown, and posts from it. */
  function learner(token: string) {
    let page = ''
    return {
      async open() {
        const response = await t.send({ url: `/lti/lesson?s=${token}` })
        expect(response.statusCode).toBe(200)
        page = response.body
        return page
      },
      async post(action: string, extra: Record<string, string | number> = {}) {
        const { fields } = formOf(page.slice(page.lastIndexOf('<form')))
        const response = await t.send(playerForm({ ...fields, action, ...extra }))
        expect(response.statusCode, textOf(response.body)).toBe(200)
        page = response.body
        return page
      },
    }
  }

  it('starts at the launch, adds capped time per page, earns XP, completes at the finish, as the API serves it', async () => {
    const { slides, quizIndex, quiz } = await setUp()
    const started = t.clock.now()
    const { token, studentId } = await player.launch({ givenName: 'Maya' })
    const maya = learner(token)
    await maya.open()
    expect(await apiEntry(studentId!)).toEqual({
      lessonSlug: ALL_KINDS_LESSON,
      status: 'in_progress',
      xp: 0,
      timeSeconds: 0,
      startedAt: new Date(started).toISOString(),
      completedAt: null,
    })

    t.clock.advance(40 * SECOND)
    await maya.post('next')
    expect(await apiEntry(studentId!)).toMatchObject({ status: 'in_progress', xp: 10, timeSeconds: 40 })

    // A tab left open for ten minutes counts five.
    t.clock.advance(10 * 60 * SECOND)
    await maya.post('next')
    expect(await apiEntry(studentId!)).toMatchObject({ xp: 20, timeSeconds: 40 + STEP_CAP_MS / SECOND })

    // Back and forth again earns nothing more than the slides moved on from.
    t.clock.advance(10 * SECOND)
    await maya.post('previous')
    t.clock.advance(10 * SECOND)
    await maya.post('next')
    expect(await apiEntry(studentId!)).toMatchObject({ xp: 20, timeSeconds: 360 })

    for (let slide = 2; slide < quizIndex; slide++) {
      t.clock.advance(20 * SECOND)
      await maya.post('next')
    }
    t.clock.advance(15 * SECOND)
    expect(textOf(await maya.post('answer', { answer: quiz.answer }))).toContain('Right!')
    t.clock.advance(5 * SECOND)
    for (let slide = quizIndex; slide < slides.length - 1; slide++) await maya.post('next')
    const finishedAt = t.clock.now()
    const done = await maya.post('finish')
    expect(textOf(done)).toContain('Lesson complete')
    expect(textOf(done)).toContain(`You have earned ${lessonXpMax(slides)} XP in this lesson.`)

    const time = 360 + 20 * (quizIndex - 2) + 15 + 5
    const completed = {
      lessonSlug: ALL_KINDS_LESSON,
      status: 'completed',
      xp: lessonXpMax(slides),
      timeSeconds: time,
      startedAt: new Date(started).toISOString(),
      completedAt: new Date(finishedAt).toISOString(),
    }
    expect(await apiEntry(studentId!)).toEqual(completed)

    // Opened again the next day and answered wrong: still completed, nothing earned is lost.
    t.clock.advance(86_400 * SECOND)
    const again = learner((await player.launch({ givenName: 'Maya' })).token)
    await again.open()
    for (let slide = 0; slide < quizIndex; slide++) await again.post('next')
    t.clock.advance(30 * SECOND)
    await again.post('answer', { answer: (quiz.answer + 1) % quiz.choices.length })
    expect(await apiEntry(studentId!)).toEqual({ ...completed, timeSeconds: time + 30 })

    // The change feed carries every change, the last one the entry as it now is.
    const feed = await t.call({ url: '/api/v1/progress/changes?from=beginning', headers: bearer(t.fixtures.keys.read) })
    const mine = (feed.json().changes as { profileId: string; type: string; displayName: string; progress: unknown }[])
      .filter((change) => change.profileId === studentId)
      .filter((change) => change.type === 'progress_updated')
    expect(mine.length).toBe((await changesOf(studentId!)).length)
    expect(mine.at(-1)).toMatchObject({ displayName: 'Maya', progress: { ...completed, timeSeconds: time + 30 } })
  })

  it('earns no quiz XP for an answer right only at the second try', async () => {
    const { slides, quizIndex, quiz } = await setUp()
    const { token, studentId } = await player.launch({ sub: 'second-try' })
    const ben = learner(token)
    await ben.open()
    for (let slide = 0; slide < quizIndex; slide++) await ben.post('next')
    await ben.post('answer', { answer: (quiz.answer + 1) % quiz.choices.length })
    await ben.post('answer', { answer: quiz.answer })
    for (let slide = quizIndex; slide < slides.length - 1; slide++) await ben.post('next')
    await ben.post('finish')
    expect(await apiEntry(studentId!)).toMatchObject({ status: 'completed', xp: 10 * slides.length })
  })

  it('counts a page posted twice at once (a double click) once, and a launch opened twice at once once', async () => {
    await setUp()
    const { token, studentId } = await player.launch({ sub: 'double-click' })
    const opened = await Promise.all([1, 2].map(() => t.send({ url: `/lti/lesson?s=${token}` })))
    expect(opened.map((response) => response.statusCode)).toEqual([200, 200])
    expect(await changesOf(studentId!)).toHaveLength(1)

    t.clock.advance(60 * SECOND)
    const form = playerForm({ s: token, slide: 0, action: 'next' })
    const posted = await Promise.all([1, 2, 3].map(() => t.send(form)))
    expect(posted.map((response) => response.statusCode)).toEqual([200, 200, 200])
    expect(await storedEntry(studentId!)).toMatchObject({ status: 'in_progress', xp: 10, time_seconds: 60 })
    expect(await changesOf(studentId!)).toHaveLength(2)

    t.clock.advance(30 * SECOND)
    const finish = playerForm({ s: token, slide: 6, action: 'finish' })
    await Promise.all([1, 2].map(() => t.send(finish)))
    const row = (await storedEntry(studentId!))!
    expect(row).toMatchObject({ status: 'completed', xp: 70, time_seconds: 90 })
    expect(row.completed_at).toBe(new Date(t.clock.now()).toISOString())
    expect(await changesOf(studentId!)).toHaveLength(3)
  })

  it('keeps an imported completion and its XP; records nothing for a teacher or a launch without sub', async () => {
    await setUp()
    const { token, studentId } = await player.launch({ sub: 'imported' })
    const imported = {
      studentId: studentId!,
      lessonSlug: ALL_KINDS_LESSON,
      status: 'completed' as const,
      xp: 500,
      timeSeconds: 1200,
      startedAt: '2026-01-05T10:00:00.000Z',
      completedAt: '2026-01-05T10:30:00.000Z',
    }
    await upsertProgress(t.storage.db, [imported], t.clock.now())
    const zoe = learner(token)
    await zoe.open()
    t.clock.advance(10 * SECOND)
    await zoe.post('next')
    expect(await apiEntry(studentId!)).toEqual({
      lessonSlug: ALL_KINDS_LESSON,
      status: 'completed',
      xp: 500,
      timeSeconds: 1210,
      startedAt: imported.startedAt,
      completedAt: imported.completedAt,
    })

    const before = await t.storage.db.selectFrom('student_changes').select('seq').execute()
    for (const launch of [await player.launch({ roles: ['instructor'] }), await player.launch({ sub: null })]) {
      const teacher = learner(launch.token)
      await teacher.open()
      t.clock.advance(10 * SECOND)
      await teacher.post('next')
    }
    expect(await t.storage.db.selectFrom('student_changes').select('seq').execute()).toHaveLength(before.length)
    const states = await t.storage.db.selectFrom('lti_lesson_states').select('student_id').execute()
    expect(states.map((state) => state.student_id)).toEqual([studentId])
  })

  it("announces each change to the organisation's webhook endpoint, records no disclosure of its own, and is erased with the student", async () => {
    await setUp()
    receiver = new Receiver()
    const url = await receiver.start()
    await createEndpoint(
      t.storage.db,
      { organisationId: t.fixtures.orgs.acme, mode: 'live', url: `${url}/hook`, events: ['progress.updated'] },
      t.clock.now(),
    )
    const { token, studentId } = await player.launch({ sub: 'hooked' })
    const ana = learner(token)
    await ana.open()
    t.clock.advance(25 * SECOND)
    await ana.post('next')
    // The learner's own pages are no disclosure to a partner.
    expect(await listDisclosures(t.storage.db, { studentId: studentId! })).toEqual([])

    const deliverer = new WebhookDeliverer({
      storage: t.storage,
      clock: t.clock,
      log: console as never,
      timeoutMs: 2000,
      allowLoopback: true,
    })
    expect(await deliverer.run()).toBe(2)
    await receiver.arrived(2)
    const bodies = receiver.received.map(
      (got) => JSON.parse(got.body) as { type: string; data: Record<string, unknown> },
    )
    expect(bodies.map((body) => body.type)).toEqual(['progress.updated', 'progress.updated'])
    expect(bodies.map((body) => body.data.profileId)).toEqual([studentId, studentId])
    const last = bodies.find((body) => (body.data.progress as ProgressEntry[])[0]!.timeSeconds === 25)!
    expect((last.data.progress as ProgressEntry[])[0]).toEqual(await apiEntry(studentId!))
    // Those who were told recorded it: each delivery, and the API read.
    const actions = (await listDisclosures(t.storage.db, { studentId: studentId! })).map((row) => row.action)
    expect(actions.sort()).toEqual(['progress.read', 'webhook', 'webhook'])

    await eraseStudents(t.storage.db, [studentId!], t.clock.now())
    expect(await t.storage.db.selectFrom('lti_lesson_states').selectAll().execute()).toEqual([])
    expect(await storedEntry(studentId!)).toBeUndefined()
  })
})
