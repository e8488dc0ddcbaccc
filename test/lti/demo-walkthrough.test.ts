/// <reference lib="dom" />
/**
 * docs/lti.md's "Trying it on one machine", in Chromium: the service (PUBLIC_URL on localhost,
 * LTI_ALLOW_LOOPBACK) and the demo platform's course page (on 127.0.0.1, another site). The
 * operator makes a registration URL for the partner organisation on the dashboard, the platform
 * registers through its page, the operator activates it on the dashboard, the teacher adds a lesson by deep linking, the student Ada
 * opens it and finishes it; the platform's gradebook then shows her completed score, and the
 * partner API her completed lesson, in her progress and in the change feed.
 */
import net from 'node:net'
import type { Browser, Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildApp } from '../../src/app.js'
import { systemClock } from '../../src/clock.js'
import { TestPlatform } from '../../src/demo/lti-platform.js'
import { addDemoPages, DEMO_STUDENT } from '../../src/demo/lti-platform-pages.js'
import type { Slide } from '../../src/catalog/slides.js'
import type { TypedApp } from '../../src/http/app-types.js'
import { lessonBySlug } from '../../src/storage/catalog-repository.js'
import type { Storage } from '../../src/storage/connection.js'
import { listRegistrations } from '../../src/storage/lti-registration-repository.js'
import { createTestStorage, type Fixtures, requestPathOptions, seedFixtures, testConfig } from '../helper.js'
import { createOperatorWithAuthenticator } from '../dashboard/dashboard-client.js'
import { hasChromium, launchBrowser, screenshot, signIn, textOf } from '../support/browser.js'

const LESSON = 'explorer/e1-robots-follow-instructions'
const OPERATOR_LOGIN = { email: 'ops@demo-walkthrough.example', password: 'operator password 2026' }

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

describe.skipIf(!hasChromium())('trying the LTI tool on one machine with the demo platform', () => {
  let storage: Storage
  let fixtures: Fixtures
  let app: TypedApp
  let platform: TestPlatform
  let browser: Browser
  let toolUrl: string
  let apiUrl: string
  let operatorTotp: string

  beforeAll(async () => {
    const port = await freePort()
    toolUrl = `http://localhost:${port}`
    apiUrl = `http://127.0.0.1:${port}`
    storage = await createTestStorage()
    fixtures = await seedFixtures(storage, systemClock.now())
    operatorTotp = (await createOperatorWithAuthenticator(storage.db, systemClock, OPERATOR_LOGIN)).secret
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
    platform = new TestPlatform({ product: 'demo-platform' })
    addDemoPages(platform)
    await platform.start()
    browser = await launchBrowser()
  }, 60_000)

  afterAll(async () => {
    await browser?.close()
    await platform?.stop()
    await app?.close()
    await storage?.close()
  })

  const frameOf = (page: Page, title: string) => page.frameLocator(`iframe[title="${title}"]`)

  async function api(path: string): Promise<Record<string, unknown>> {
    const response = await fetch(`${apiUrl}${path}`, { headers: { authorization: `Bearer ${fixtures.keys.read}` } })
    expect(response.status, path).toBe(200)
    return (await response.json()) as Record<string, unknown>
  }

  it('registers, activates, adds a lesson, launches Ada, and carries her completed lesson to the gradebook and the API', async () => {
    const context = await browser.newContext({ viewport: { width: 1000, height: 900 } })
    const page = await context.newPage()
    try {
      // The operator makes the partner organisation's registration URL on the dashboard.
      // One person on one machine: the dashboard in another tab of the same browser, its cookies there too.
      const operator = await context.newPage()
      await operator.goto(`${toolUrl}/dashboard/login`)
      await signIn(operator, OPERATOR_LOGIN.email, OPERATOR_LOGIN.password, operatorTotp)
      await operator.getByRole('link', { name: 'LTI', exact: true }).click()
      await operator.getByLabel('Organisation').selectOption({ label: 'Acme Learning' })
      await operator.getByRole('button', { name: 'Make a registration URL' }).click()
      const registrationUrl = await operator.getByLabel('Registration URL').inputValue()
      expect(registrationUrl).toMatch(new RegExp(`^${toolUrl}/lti/register/`))

      // Pasted into the demo platform (a background tab's clicks may be lost, hence bringToFront).
      await page.bringToFront()
      await page.goto(`${platform.origin}/`)
      expect(await textOf(page.getByRole('heading', { level: 1 }))).toBe('Demo learning platform')
      await page.getByLabel("The tool's registration URL").fill(registrationUrl)
      await page.getByRole('button', { name: 'Register' }).click()
      await page.locator('#status', { hasText: 'Registered' }).waitFor({ timeout: 20_000 })
      await screenshot(page, 'lti-demo-1-registered')

      // The operator activates it: pending, with the deployment the platform's answer named.
      const [registration] = await listRegistrations(storage.db)
      expect(registration).toMatchObject({ status: 'pending', method: 'dynamic', client_id: platform.clientId })
      await operator.goto(`${toolUrl}/dashboard/operator/lti/registrations/${registration!.id}`)
      expect(await textOf(operator.locator('main'))).toContain(platform.deploymentId)
      await operator.getByRole('button', { name: /^Activate / }).click()
      await operator.getByText('Its launches are accepted').first().waitFor({ timeout: 10_000 })
      expect((await listRegistrations(storage.db))[0]).toMatchObject({ status: 'active' })

      // The teacher adds a lesson.
      await page.bringToFront()
      await page.goto(`${platform.origin}/`)
      expect(await textOf(page.locator('#registered'))).toContain(platform.clientId)
      await page.getByRole('link', { name: 'Add a lesson' }).click()
      const picker = frameOf(page, 'Add a lesson')
      await picker.getByRole('heading', { name: 'Choose lessons to add' }).waitFor({ timeout: 20_000 })
      await picker.getByLabel(/Robots Follow Instructions/).check()
      await picker.getByRole('button', { name: 'Add to the course' }).click()
      await picker.locator('#added').waitFor({ timeout: 20_000 })
      expect(platform.placedLinks).toEqual([
        expect.objectContaining({ custom: { lesson: LESSON }, lineItem: expect.stringContaining(platform.origin) }),
      ])

      // The student opens it and finishes it.
      await page.goto(`${platform.origin}/`)
      await page.getByRole('link', { name: 'Open as student Ada' }).click()
      const lesson = frameOf(page, 'Lesson')
      await lesson.getByText(/Slide 1 of \d+/).waitFor({ timeout: 20_000 })
      const total = Number(/of (\d+)/.exec(await textOf(lesson.getByText(/Slide 1 of \d+/)))![1])
      const slides = JSON.parse((await lessonBySlug(storage.db, LESSON))!.slides) as Slide[]
      expect(slides).toHaveLength(total)
      for (let index = 1; index <= total; index++) {
        const slide = slides[index - 1]!
        if (slide.type === 'quiz') {
          await lesson.getByLabel(slide.choices[slide.answer]!, { exact: true }).check()
          await lesson.getByRole('button', { name: 'Check my answer' }).click()
          await lesson.getByText('Right!').first().waitFor({ timeout: 10_000 })
        }
        if (index === total) break
        await lesson.getByRole('button', { name: 'Next' }).click()
        await lesson.getByText(`Slide ${index + 1} of ${total}`).waitFor({ timeout: 10_000 })
      }
      await lesson.getByRole('button', { name: 'Finish lesson' }).click()
      await lesson.getByText('Lesson complete').first().waitFor({ timeout: 10_000 })
      await screenshot(page, 'lti-demo-2-finished')

      // The score worker sends what the lesson queued; the gradebook shows the last score.
      while ((await app.services.ltiScores.run()) > 0);
      await page.goto(`${platform.origin}/`)
      const row = page.locator('#gradebook tbody tr')
      expect(await row.count()).toBe(1)
      expect((await row.locator('td').allTextContents()).map((cell) => cell.trim())).toEqual([
        'Robots Follow Instructions',
        'Ada',
        'Completed',
        'FullyGraded',
        '100 / 100',
      ])
      await screenshot(page, 'lti-demo-3-gradebook')
      expect(platform.scores.at(-1)?.body).toMatchObject({ userId: DEMO_STUDENT.sub, scoreGiven: 100 })

      // The partner API: the student's progress and the change feed.
      const student = await storage.db
        .selectFrom('lti_students')
        .select('student_id')
        .where('sub', '=', DEMO_STUDENT.sub)
        .executeTakeFirstOrThrow()
      const progress = await api(`/api/v1/students/${student.student_id}/progress`)
      expect(progress.progress).toContainEqual(expect.objectContaining({ lessonSlug: LESSON, status: 'completed' }))
      const changes = JSON.stringify(await api('/api/v1/progress/changes?from=beginning&limit=100'))
      expect(changes).toContain(student.student_id)
      expect(changes).toContain(LESSON)
    } finally {
      await context.close()
    }
  }, 120_000)
})
