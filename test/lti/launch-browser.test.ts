/// <reference lib="dom" />
/**
 * The launch and deep linking in Chromium, the tool inside an iframe of a course page on another
 * site (the course at localhost, the tool at tool.test, mapped to this machine): the login, the
 * platform's auto-posting form, the launch and its 303 to the lesson all happen in the frame with
 * no cookie, and the lesson player shows the lesson there; a teacher's lesson picker (axe-core
 * clean) posts its signed answer back to the platform by itself, as the page's
 * Content-Security-Policy allows, or with its Continue button when JavaScript is off.
 */
import fs from 'node:fs'
import { createRequire } from 'node:module'
import net from 'node:net'
import type { Browser, Frame, FrameLocator, Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildApp } from '../../src/app.js'
import { systemClock } from '../../src/clock.js'
import { CLAIM, MESSAGE, ROLE } from '../../src/domain/lti-claims.js'
import type { TypedApp } from '../../src/http/app-types.js'
import type { Storage } from '../../src/storage/connection.js'
import { createTestStorage, requestPathOptions, seedFixtures, testConfig } from '../helper.js'
import { describeViolations, hasChromium, launchBrowser, screenshot } from '../support/browser.js'
import { TestPlatform } from '../support/lti-platform.js'
import { registerPlatform } from '../support/lti.js'

const axeSource = fs.readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8')

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer()
    server.once('error', reject)
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo
      server.close(() => resolve(port))
    })
  })
}

describe.skipIf(!hasChromium())('LTI launches in a browser, inside a platform’s iframe', () => {
  let storage: Storage
  let app: TypedApp
  let platform: TestPlatform
  let browser: Browser
  let toolUrl: string
  let courseUrl: string

  beforeAll(async () => {
    const port = await freePort()
    toolUrl = `http://tool.test:${port}`
    storage = await createTestStorage()
    const fixtures = await seedFixtures(storage, systemClock.now())
    app = await buildApp(
      requestPathOptions({
        config: testConfig({ LTI_ALLOW_LOOPBACK: 'true', PUBLIC_URL: toolUrl }),
        storage,
        clock: systemClock,
        logger: false,
        pollChanges: false,
      }),
    )
    await app.listen({ port, host: '127.0.0.1' })
    platform = new TestPlatform()
    // The course page: the tool in an iframe, opened at its login URL as a platform opens it.
    platform.app.get('/course', async (_request, reply) => {
      const login = new URL(`${toolUrl}/lti/login`)
      login.searchParams.set('iss', platform.issuer)
      login.searchParams.set('client_id', platform.clientId)
      login.searchParams.set('login_hint', 'browser-user')
      login.searchParams.set('target_link_uri', `${toolUrl}/lti/launch`)
      return reply
        .type('text/html')
        .send(
          `<!doctype html><html lang="en"><title>Course</title><h1>Course</h1>` +
            `<iframe title="Lesson" src="${login.toString().replace(/&/g, '&amp;')}" width="900" height="700"></iframe>`,
        )
    })
    await platform.start()
    // Another site than the tool's, and on this machine, as LTI_ALLOW_LOOPBACK lets a page frame the tool.
    courseUrl = `${platform.origin.replace('127.0.0.1', 'localhost')}/course`
    await registerPlatform(storage, systemClock, platform, {
      organisationId: fixtures.orgs.acme,
      toolBase: `http://127.0.0.1:${port}`,
    })
    browser = await launchBrowser(['--host-resolver-rules=MAP *.test 127.0.0.1'])
  }, 60_000)

  afterAll(async () => {
    await browser?.close()
    await platform?.stop()
    await app?.close()
    await storage?.close()
  })

  /**
   * The course page, and the iframe in it: looked up again at each use, since a cross-site
   * navigation may move the frame to another process.
   */
  async function openCourse(javaScriptEnabled = true): Promise<{ page: Page; frame: () => FrameLocator }> {
    const context = await browser.newContext({ viewport: { width: 1000, height: 800 }, javaScriptEnabled })
    const page = await context.newPage()
    return { page, frame: () => page.frameLocator('iframe[title="Lesson"]') }
  }

  /** The frame of the iframe as it is now, for what a locator cannot do (run axe-core in it). */
  const childFrame = (page: Page): Frame => page.frames().find((f) => f.parentFrame() === page.mainFrame())!

  it('takes a learner from the login through the platform’s form post to the lesson, inside the iframe', async () => {
    platform.nextLaunch = () =>
      platform.launchClaims(toolUrl, { [CLAIM.custom]: { lesson: 'builder/b2-loops-save-time' } })
    const { page } = await openCourse()
    const launched = page.waitForResponse((r) => new URL(r.url()).pathname === '/lti/launch')
    const lesson = page.waitForRequest((r) => new URL(r.url()).pathname === '/lti/lesson', { timeout: 20_000 })
    await page.goto(courseUrl)
    const launch = await launched
    expect(launch.status()).toBe(303)
    expect(launch.request().method()).toBe('POST')
    expect(new URL(launch.url()).host).toBe(new URL(toolUrl).host)
    const request = await lesson
    expect(request.frame().parentFrame()).toBe(page.mainFrame())
    expect(request.url()).toMatch(new RegExp(`^${toolUrl}/lti/lesson\\?s=v1\\.`))
    // The lesson player answers it: the lesson at its first slide, inside the frame.
    const lessonFrame = page.frameLocator('iframe[title="Lesson"]')
    await lessonFrame.getByText(/Slide 1 of \d+/).waitFor({ timeout: 20_000 })
    expect(await lessonFrame.locator('h1').first().textContent()).toContain('Loops Save Time')
    expect(await page.context().cookies()).toEqual([])
    expect(platform.logins.at(-1)).toMatchObject({ login_hint: 'browser-user', redirect_uri: `${toolUrl}/lti/launch` })
    const students = await storage.db.selectFrom('lti_students').selectAll().execute()
    expect(students.map((row) => row.sub)).toEqual(['learner-1'])
    const progress = await storage.db
      .selectFrom('progress')
      .select(['lesson_slug', 'status'])
      .where('student_id', '=', students[0]!.student_id)
      .execute()
    expect(progress).toEqual([{ lesson_slug: 'builder/b2-loops-save-time', status: 'in_progress' }])
    await page.context().close()
  })

  const deepLinkingRequest = () =>
    platform.launchClaims(toolUrl, {
      [CLAIM.messageType]: MESSAGE.deepLinkingRequest,
      [CLAIM.roles]: [ROLE.instructor],
      [CLAIM.resourceLink]: undefined,
      [CLAIM.deepLinkingSettings]: {
        deep_link_return_url: `${platform.origin}/deep-link-return`,
        accept_types: ['ltiResourceLink'],
        accept_multiple: true,
        data: 'browser-data',
      },
    })

  it('lets a teacher pick a lesson in the iframe; the picker posts its signed answer to the platform by itself', async () => {
    platform.nextLaunch = deepLinkingRequest
    const { page, frame } = await openCourse()
    const violations: string[] = []
    page.on('console', (message) => {
      if (message.text().includes('Content Security Policy')) violations.push(message.text())
    })
    await page.goto(courseUrl)
    await frame().getByRole('heading', { name: 'Choose lessons to add' }).waitFor({ timeout: 20_000 })
    await childFrame(page).evaluate(axeSource)
    const found = (await childFrame(page).evaluate(async () => {
      const axe = (globalThis as unknown as { axe: { run(c: unknown): Promise<{ violations: unknown[] }> } }).axe
      return (await axe.run(document)).violations
    })) as Parameters<typeof describeViolations>[0]
    expect(describeViolations(found.filter((v) => v.impact === 'serious' || v.impact === 'critical'))).toEqual([])
    await screenshot(page, 'lti-10-picker-in-iframe')

    await frame()
      .getByLabel(/Loops Save Time/)
      .check()
    await frame()
      .getByLabel(/Patterns All Around/)
      .check()
    await frame().getByRole('button', { name: 'Add to the course' }).click()
    await frame().locator('#added').waitFor({ timeout: 20_000 })
    expect(platform.deepLinkResponses).toHaveLength(1)
    const items = platform.deepLinkResponses[0]!.payload[CLAIM.contentItems] as { custom: { lesson: string } }[]
    expect(items.map((item) => item.custom.lesson)).toEqual([
      'explorer/e3-patterns-all-around',
      'builder/b2-loops-save-time',
    ])
    expect(violations).toEqual([])
    await page.context().close()
  })

  it('works without JavaScript: each auto-posting form has its Continue button', async () => {
    platform.nextLaunch = deepLinkingRequest
    const before = platform.deepLinkResponses.length
    const { page, frame } = await openCourse(false)
    await page.goto(courseUrl)
    // The platform's own form, then the tool's picker and its answer, each sent by a press of a button.
    await frame().getByRole('button', { name: 'Continue' }).click({ timeout: 20_000 })
    await frame().getByRole('heading', { name: 'Choose lessons to add' }).waitFor({ timeout: 20_000 })
    await frame()
      .getByLabel(/Dance Loops/)
      .check()
    await frame().getByRole('button', { name: 'Add to the course' }).click()
    await frame().getByRole('heading', { name: 'Adding to the course' }).waitFor({ timeout: 20_000 })
    await frame().getByRole('button', { name: 'Continue' }).click()
    await frame().locator('#added').waitFor({ timeout: 20_000 })
    expect(platform.deepLinkResponses).toHaveLength(before + 1)
    await page.context().close()
  })
})
