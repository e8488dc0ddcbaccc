/**
 * A learner's work in the lesson player puts scores into the platform's gradebook, on both
 * engines: each step queues a score in its own transaction, a newer one replacing those still
 * waiting, so the platform gets the latest: in progress while the learner works, then completed
 * with the share of the lesson's quizzes answered right at the first try.
 */
import { afterEach, describe, expect, it } from 'vitest'
import type { Slide } from '../../src/catalog/slides.js'
import { isoAt } from '../../src/clock.js'
import { lessonBySlug } from '../../src/storage/catalog-repository.js'
import { buildTestApp, type TestContext } from '../helper.js'
import { formOf } from '../support/lti-platform.js'
import { ALL_KINDS_LESSON, PlayerFixture, playerForm } from '../support/lti-player.js'
import { placeLesson, scoreRows } from '../support/lti-scores.js'

const SECOND = 1000

describe('scores from the lesson player', () => {
  let t: TestContext
  let player: PlayerFixture
  afterEach(async () => {
    await player?.stop()
    await t?.close()
  })

  /** A learner of `sub` working through the lesson, a second between pages. */
  async function learner(sub: string) {
    const { token } = await player.launch({ sub })
    let page = (await t.send({ url: `/lti/lesson?s=${token}` })).body
    return async (action: string, extra: Record<string, string | number> = {}) => {
      t.clock.advance(SECOND)
      const { fields } = formOf(page.slice(page.lastIndexOf('<form')))
      const response = await t.send(playerForm({ ...fields, action, ...extra }))
      expect(response.statusCode).toBe(200)
      page = response.body
    }
  }

  it('sends the latest: in progress while working, then completed with the quiz share', async () => {
    t = await buildTestApp({ env: { LTI_ALLOW_LOOPBACK: 'true' } })
    player = await new PlayerFixture(t).start()
    player.platform.now = () => t.clock.now()
    const lineItem = `${player.platform.origin}/contexts/course-1/lineitems/1`
    await placeLesson(
      t.storage,
      player.registration,
      { id: 'link-1', lesson: ALL_KINDS_LESSON, lineItem },
      t.clock.now(),
    )
    const slides = JSON.parse((await lessonBySlug(t.storage.db, ALL_KINDS_LESSON))!.slides) as Slide[]
    const quizIndex = slides.findIndex((slide) => slide.type === 'quiz')
    const quiz = slides[quizIndex] as Extract<Slide, { type: 'quiz' }>
    expect(slides.filter((slide) => slide.type === 'quiz')).toHaveLength(1)

    // Maya opens the lesson and moves on twice: only the newest of those scores is sent.
    const maya = await learner('maya')
    await maya('next')
    await maya('next')
    expect(await t.app.services.ltiScores.run()).toBe(1)
    expect(player.platform.scores.map((score) => score.body)).toEqual([
      { userId: 'maya', activityProgress: 'InProgress', gradingProgress: 'Pending', timestamp: isoAt(t.clock.now()) },
    ])
    expect((await scoreRows(t.storage)).map((row) => row.state)).toEqual(['cancelled', 'cancelled', 'sent'])

    // Her first answer is wrong, her second right: the first is what counts.
    for (let slide = 2; slide < quizIndex; slide++) await maya('next')
    await maya('answer', { answer: (quiz.answer + 1) % quiz.choices.length })
    await maya('answer', { answer: quiz.answer })
    for (let slide = quizIndex; slide < slides.length - 1; slide++) await maya('next')
    await maya('finish')
    // Leo answers right at once.
    const leo = await learner('leo')
    for (let slide = 0; slide < quizIndex; slide++) await leo('next')
    await leo('answer', { answer: quiz.answer })
    for (let slide = quizIndex; slide < slides.length - 1; slide++) await leo('next')
    await leo('finish')
    const finished = t.clock.now()

    expect(await t.app.services.ltiScores.run()).toBe(2)
    const completed = player.platform.scores.slice(1).map((score) => score.body)
    expect(completed.map((body) => [body.userId, body.scoreGiven, body.scoreMaximum, body.activityProgress])).toEqual([
      ['maya', 0, 100, 'Completed'],
      ['leo', 100, 100, 'Completed'],
    ])
    expect(completed[1]).toMatchObject({ gradingProgress: 'FullyGraded', timestamp: isoAt(finished) })
  })
})
