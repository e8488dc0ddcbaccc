/// <reference lib="dom" />
/**
 * The lesson player in Chromium, as a platform shows it: inside an iframe of a course page on
 * another origin (and another site: `localhost` framing `127.0.0.1`), on a phone-sized screen.
 * A learner works through a lesson with every kind of slide, part of it by keyboard alone,
 * answers its quiz and finishes it; each kind of slide is checked with axe-core and for sideways
 * scrolling at 360 px, and the API then serves the completed lesson.
 */
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import type { Browser, Frame, Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Slide } from '../../src/catalog/slides.js'
import { lessonXpMax } from '../../src/domain/lesson-xp.js'
import { lessonBySlug } from '../../src/storage/catalog-repository.js'
import { bearer, buildTestApp, type TestContext } from '../helper.js'
import { describeViolations, hasChromium, launchBrowser, screenshot, seriousViolations } from '../support/browser.js'
import { ALL_KINDS_LESSON, PlayerFixture } from '../support/lti-player.js'

const PHONE = { width: 360, height: 740 }

/** A course page of the platform: the lesson in an iframe filling the screen. */
function coursePage(src: string): string {
  const escaped = src.replace(/&/g, '&amp;').replace(/"/g, '&quot;')
  return `<!doctype html><html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1"><title>Course</title>
<style>body { margin: 0 } iframe { display: block; border: 0; width: 100%; height: 100vh }</style></head>
<body><iframe title="Lesson" src="${escaped}"></iframe></body></html>`
}

describe.skipIf(!hasChromium())('the lesson player in a browser, inside a platform page', () => {
  let t: TestContext
  let player: PlayerFixture
  let browser: Browser
  let course: http.Server
  let page: Page
  let slides: Slide[]
  let studentId: string

  beforeAll(async () => {
    t = await buildTestApp({ env: { LTI_ALLOW_LOOPBACK: 'true' } })
    player = await new PlayerFixture(t).start()
    slides = JSON.parse((await lessonBySlug(t.storage.db, ALL_KINDS_LESSON))!.slides) as Slide[]
    const launch = await player.launch({ givenName: 'Maya' })
    studentId = launch.studentId!
    const src = `${t.base}/lti/lesson?s=${launch.token}`
    course = http.createServer((_request, response) => {
      response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(coursePage(src))
    })
    await new Promise<void>((resolve) => course.listen(0, '127.0.0.1', resolve))
    browser = await launchBrowser()
    page = await (await browser.newContext({ viewport: PHONE })).newPage()
  }, 60_000)

  afterAll(async () => {
    await browser?.close()
    if (course !== undefined) {
      course.closeAllConnections()
      await new Promise((resolve) => course.close(resolve))
    }
    await player?.stop()
    await t?.close()
  })

  /** The lesson's frame, once it shows `text`. */
  async function lessonShowing(text: string): Promise<Frame> {
    const frame = page.frameLocator('iframe[title="Lesson"]')
    await frame.getByText(text, { exact: false }).first().waitFor({ timeout: 10_000 })
    const found = page.frames().find((candidate) => candidate.url().startsWith(`${t.base}/lti/lesson`))
    expect(found, 'the lesson in its frame').toBeDefined()
    return found!
  }

  /** axe-core finds nothing serious, and nothing is wider than the phone's screen. */
  async function expectUsable(frame: Frame, name: string): Promise<void> {
    await screenshot(page, `lti-player-${name}`)
    expect(describeViolations(await seriousViolations(frame)), name).toEqual([])
    const widths = await frame.evaluate(() => ({
      scroll: document.documentElement.scrollWidth,
      client: document.documentElement.clientWidth,
    }))
    expect(widths.client, name).toBeLessThanOrEqual(PHONE.width)
    expect(widths.scroll, `${name}: no sideways scrolling`).toBeLessThanOrEqual(widths.client)
  }

  /** Moves the keyboard focus forward until it is on the control named `name` in the lesson. */
  async function tabTo(frame: Frame, name: string): Promise<void> {
    for (let presses = 0; presses < 20; presses++) {
      await page.keyboard.press('Tab')
      const focused = await frame.evaluate(() => {
        const element = document.activeElement
        if (element === null) return ''
        const label = element.id === '' ? null : document.querySelector(`label[for="${element.id}"]`)
        return (label?.textContent ?? element.textContent ?? '').trim()
      })
      if (focused === name) return
    }
    throw new Error(`the keyboard never reached "${name}"`)
  }

  it('works through a lesson of every kind of slide, by keyboard in part, accessible and phone-sized throughout', async () => {
    const courseUrl = `http://localhost:${(course.address() as AddressInfo).port}/`
    await page.goto(courseUrl)
    const seen = new Set<string>()
    const quizIndex = slides.findIndex((slide) => slide.type === 'quiz')
    const quiz = slides[quizIndex] as Extract<Slide, { type: 'quiz' }>
    for (let index = 0; index < slides.length; index++) {
      const frame = await lessonShowing(`Slide ${index + 1} of ${slides.length}`)
      const slide = slides[index]!
      if (!seen.has(slide.type)) {
        seen.add(slide.type)
        await expectUsable(frame, `${index + 1}-${slide.type}`)
      }
      if (index === quizIndex) {
        // By keyboard: into the choices, arrows to the right one, then check it.
        await tabTo(frame, quiz.choices[0]!)
        await page.keyboard.press('Space')
        for (let k = 0; k < quiz.answer; k++) await page.keyboard.press('ArrowDown')
        await tabTo(frame, 'Check my answer')
        await page.keyboard.press('Enter')
        const answered = await lessonShowing('Right!')
        await expectUsable(answered, `${index + 1}-quiz-answered`)
      }
      if (index === slides.length - 1) break
      if (index === 0) {
        // The first step by keyboard alone.
        await tabTo(frame, 'Next')
        await page.keyboard.press('Enter')
      } else {
        await page.frameLocator('iframe[title="Lesson"]').getByRole('button', { name: 'Next' }).click()
      }
    }
    expect([...seen].sort()).toEqual(['activity', 'bullets', 'code', 'quiz', 'vocabulary'])

    await page.frameLocator('iframe[title="Lesson"]').getByRole('button', { name: 'Finish lesson' }).click()
    const finished = await lessonShowing('Lesson complete')
    expect(await finished.textContent('main')).toContain(`You have earned ${lessonXpMax(slides)} XP in this lesson.`)
    await expectUsable(finished, 'finished')

    const progress = await t.call({
      url: `/api/v1/students/${studentId}/progress`,
      headers: bearer(t.fixtures.keys.read),
    })
    expect(progress.json().progress).toContainEqual(
      expect.objectContaining({ lessonSlug: ALL_KINDS_LESSON, status: 'completed', xp: lessonXpMax(slides) }),
    )
  })
})
