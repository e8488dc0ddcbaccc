/**
 * The lesson player over a real socket, on both engines: every kind of slide rendered on the
 * server, quiz answers checked there (the right choice is in no page before an answer), the
 * headers that let it live in a platform's iframe and keep its session out of caches and
 * referrers, and a clear page (never a 500) for an ended, altered or impossible request.
 */
import { afterEach, describe, expect, it } from 'vitest'
import { deactivateRegistration } from '../../src/cases/lti-registrations.js'
import type { Slide } from '../../src/catalog/slides.js'
import { SESSION_MS } from '../../src/domain/lti-player-session.js'
import { lessonBySlug } from '../../src/storage/catalog-repository.js'
import { buildTestApp, type TestContext } from '../helper.js'
import { OPERATOR } from '../support/lti.js'
import { formOf } from '../support/lti-platform.js'
import { ALL_KINDS_LESSON, PlayerFixture, playerForm, sealedSession, textOf } from '../support/lti-player.js'

const LOOPBACK = { LTI_ALLOW_LOOPBACK: 'true' }

describe('the lesson player', () => {
  let t: TestContext
  let player: PlayerFixture
  afterEach(async () => {
    await player?.stop()
    await t?.close()
  })

  async function setUp(env: Record<string, string> = LOOPBACK) {
    t = await buildTestApp({ env })
    player = await new PlayerFixture(t).start()
  }

  async function slidesOf(slug: string): Promise<Slide[]> {
    return JSON.parse((await lessonBySlug(t.storage.db, slug))!.slides) as Slide[]
  }

  /** Posts `action` from the page `page` shows (its own hidden fields) and returns the answer. */
  function act(page: string, action: string, extra: Record<string, string> = {}) {
    const { fields } = formOf(page.slice(page.lastIndexOf('<form')))
    return t.send(playerForm({ ...fields, action, ...extra }))
  }

  it('renders every kind of slide on the server, in order, with where the learner is', async () => {
    await setUp()
    const slides = await slidesOf(ALL_KINDS_LESSON)
    expect(new Set(slides.map((slide) => slide.type))).toEqual(
      new Set(['bullets', 'vocabulary', 'code', 'activity', 'quiz']),
    )
    const { token } = await player.launch()
    let response = await t.send({ url: `/lti/lesson?s=${token}` })
    for (let index = 0; index < slides.length; index++) {
      expect(response.statusCode).toBe(200)
      const page = response.body
      const slide = slides[index]!
      expect(textOf(page)).toContain(`Slide ${index + 1} of ${slides.length}`)
      expect(page).toContain(`<progress max="${slides.length}" value="${index + 1}"`)
      expect(page).toContain('<meta name="viewport" content="width=device-width, initial-scale=1">')
      expect(page).toMatch(/<main id="main"/)
      expect(page).toContain('<nav class="steps" aria-label="Lesson steps">')
      if (slide.type === 'bullets') for (const point of slide.points) expect(textOf(page)).toContain(point)
      if (slide.type === 'activity') {
        expect(page).toContain('<ol>')
        for (const step of slide.steps) expect(textOf(page)).toContain(step)
      }
      if (slide.type === 'vocabulary') for (const term of slide.terms) expect(page).toContain(`<dt>${term.term}</dt>`)
      if (slide.type === 'code') {
        expect(page).toContain(`<pre><code class="language-${slide.language}">`)
        expect(page).toContain('print(&quot;')
        expect(textOf(page)).toContain(slide.explanation)
      }
      if (slide.type === 'quiz') {
        expect(page).toMatch(/<fieldset>\s*<legend>/)
        expect(textOf(page)).toContain(slide.question)
        expect(page.match(/type="radio"/g)).toHaveLength(slide.choices.length)
        // Nothing tells the right choice from the others before an answer: no explanation, no mark.
        expect(textOf(page)).not.toContain(slide.explanation)
        expect(page).not.toMatch(/checked|correct|right/i)
      }
      const last = index === slides.length - 1
      expect(page.includes('value="finish">Finish lesson</button>')).toBe(last)
      expect(page.includes('value="previous">Previous</button>')).toBe(index > 0)
      if (!last) response = await act(page, 'next')
    }
  })

  it('checks a quiz answer on the server and shows right or wrong with the explanation', async () => {
    await setUp()
    const slides = await slidesOf(ALL_KINDS_LESSON)
    const index = slides.findIndex((slide) => slide.type === 'quiz')
    const quiz = slides[index] as Extract<Slide, { type: 'quiz' }>
    const { token } = await player.launch({ roles: ['instructor'] })
    const form = { s: token, slide: index }
    const wrong = (quiz.answer + 1) % quiz.choices.length

    const missed = await t.send(playerForm({ ...form, action: 'answer', answer: wrong }))
    expect(missed.statusCode).toBe(200)
    expect(textOf(missed.body)).toContain('Not quite')
    expect(textOf(missed.body)).toContain(`The answer is “${quiz.choices[quiz.answer]}”.`)
    expect(textOf(missed.body)).toContain(quiz.explanation)
    expect(missed.body).toContain(`id="choice-${wrong}" name="answer" value="${wrong}" required checked`)

    const right = await t.send(playerForm({ ...form, action: 'answer', answer: quiz.answer }))
    expect(textOf(right.body)).toContain('Right!')
    expect(textOf(right.body)).toContain(quiz.explanation)
    expect(textOf(right.body)).not.toContain('Not quite')

    const none = await t.send(playerForm({ ...form, action: 'answer' }))
    expect(none.statusCode).toBe(400)
    expect(textOf(none.body)).toContain('Choose one of the answers')
    expect(none.body).toContain('aria-invalid="true"')
  })

  it('may be framed by a platform, keeps its session out of caches and referrers, and sets no cookie', async () => {
    await setUp()
    const { token } = await player.launch()
    const response = await t.send({ url: `/lti/lesson?s=${token}` })
    const csp = String(response.headers['content-security-policy'])
    expect(csp).toContain("frame-ancestors 'self' https: http://localhost:* http://127.0.0.1:*")
    expect(csp).toContain("style-src 'self'")
    expect(csp).toContain("default-src 'none'")
    expect(csp).not.toContain("'unsafe-inline'")
    expect(response.headers['x-frame-options']).toBeUndefined()
    expect(response.headers['referrer-policy']).toBe('no-referrer')
    expect(response.headers['cache-control']).toBe('no-store')
    expect(response.headers['set-cookie']).toBeUndefined()
    expect(response.headers['content-type']).toBe('text/html; charset=utf-8')

    const href = /<link rel="stylesheet" href="([^"]+)">/.exec(response.body)![1]!
    const css = await t.send({ url: href })
    expect(css.statusCode).toBe(200)
    expect(css.headers['content-type']).toBe('text/css; charset=utf-8')
    expect(css.headers['cache-control']).toContain('immutable')
    expect(css.body).toContain(':focus-visible')

    const posted = await t.send(playerForm({ s: token, slide: 0, action: 'next' }))
    expect(posted.headers['set-cookie']).toBeUndefined()
    expect(posted.headers['content-security-policy']).toBe(csp)
  })

  it('lets only https platforms frame it where loopback platforms are not allowed', async () => {
    await setUp({})
    const { token } = await player.launch()
    const response = await t.send({ url: `/lti/lesson?s=${token}` })
    expect(String(response.headers['content-security-policy'])).toMatch(/frame-ancestors 'self' https:(;|$)/)
  })

  it('answers an ended, altered or missing session, and an impossible step, with a page that says what to do', async () => {
    await setUp()
    const { token } = await player.launch()
    const page = (response: { statusCode: number; headers: Record<string, unknown>; body: string }) => {
      expect(response.headers['content-type']).toBe('text/html; charset=utf-8')
      expect(response.headers['cache-control']).toBe('no-store')
      return textOf(response.body)
    }

    // A character inside the sealed value (a last character may carry unused bits, and decode the same).
    const altered = `${token.slice(0, 10)}${token[10] === 'A' ? 'B' : 'A'}${token.slice(11)}`
    const tampered = await t.send({ url: `/lti/lesson?s=${altered}` })
    expect(tampered.statusCode).toBe(400)
    expect(page(tampered)).toContain('This lesson link is not valid')

    const stranger = await t.send(playerForm({ s: 'v1.abc.def.ghi', slide: 0, action: 'next' }))
    expect(stranger.statusCode).toBe(400)

    const missing = await t.send({ url: '/lti/lesson' })
    expect(missing.statusCode).toBe(400)
    expect(page(missing)).toContain('Open the lesson again from your course')

    for (const form of <Record<string, string | number>[]>[
      { s: token, slide: 99, action: 'next' },
      { s: token, slide: 0, action: 'previous' },
      { s: token, slide: 0, action: 'finish' },
      { s: token, slide: 0, action: 'answer', answer: 0 },
      { s: token, slide: 0, action: 'jump' },
      { s: token, slide: 'x', action: 'next' },
      { s: token, slide: 0, action: 'next', extra: 'field' },
    ]) {
      const refused = await t.send(playerForm(form))
      expect(refused.statusCode, JSON.stringify(form)).toBe(400)
      expect(page(refused)).toContain('Open the lesson again from your course')
    }
    const json = await t.send({
      method: 'POST',
      url: '/lti/lesson',
      headers: { 'content-type': 'text/plain' },
      payload: 'hello',
    })
    expect(json.statusCode).toBe(415)
    expect(page(json)).toContain('cannot be shown')

    t.clock.advance(SESSION_MS + 1)
    const ended = await t.send({ url: `/lti/lesson?s=${token}` })
    expect(ended.statusCode).toBe(401)
    expect(ended.headers['www-authenticate']).toContain('error="invalid_token"')
    expect(page(ended)).toContain('This lesson was opened too long ago')
    expect(page(ended)).toContain('Open the lesson again from your course. Your work so far is saved.')
  })

  it('refuses a lesson of a registration switched off, and a lesson no longer in the catalogue', async () => {
    await setUp()
    const { token } = await player.launch()
    const gone = await sealedSession(t, {
      registrationId: player.registration.id,
      studentId: null,
      resourceLinkId: null,
      lessonSlug: 'innovator/i99-retired',
      roles: ['learner'],
      expiresAt: t.clock.now() + SESSION_MS,
    })
    const missing = await t.send({ url: `/lti/lesson?s=${gone}` })
    expect(missing.statusCode).toBe(404)
    expect(textOf(missing.body)).toContain('no longer in the catalogue')

    await deactivateRegistration(t.storage.db, player.registration.id, OPERATOR, t.clock)
    const off = await t.send({ url: `/lti/lesson?s=${token}` })
    expect(off.statusCode).toBe(403)
    expect(textOf(off.body)).toContain('not available from your course')
  })

  it("shows a teacher's and a sub-less launch the lesson as a preview", async () => {
    await setUp()
    for (const launch of [await player.launch({ roles: ['instructor'] }), await player.launch({ sub: null })]) {
      const response = await t.send({ url: `/lti/lesson?s=${launch.token}` })
      expect(response.statusCode).toBe(200)
      expect(textOf(response.body)).toContain('Preview: your work in this lesson is not recorded here.')
    }
    const { token } = await player.launch()
    const learner = await t.send({ url: `/lti/lesson?s=${token}` })
    expect(textOf(learner.body)).not.toContain('Preview')
  })
})
