/// <reference lib="dom" />
/**
 * Dynamic registration in Chromium, as Canvas does it: a page of the platform (another origin)
 * opens the tool's registration URL in an iframe; the tool registers itself and its page posts
 * `org.imsglobal.lti.close` to the platform's window, which hears it. The tool's page is checked
 * with axe-core inside the frame.
 */
import type { Browser } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createRegistrationLink } from '../../src/cases/lti-registrations.js'
import { listRegistrations } from '../../src/storage/lti-registration-repository.js'
import { buildTestApp, type TestContext } from '../helper.js'
import {
  describeViolations,
  hasChromium,
  launchBrowser,
  screenshot,
  seriousViolations,
  textOf,
} from '../support/browser.js'
import { TestPlatform } from '../support/lti-platform.js'
import { OPERATOR } from '../support/lti.js'

describe.skipIf(!hasChromium())('dynamic registration in a browser', () => {
  let t: TestContext
  let platform: TestPlatform
  let browser: Browser | undefined

  beforeAll(async () => {
    t = await buildTestApp({ env: { LTI_ALLOW_LOOPBACK: 'true', PUBLIC_URL: 'https://curriculum.example.org' } })
    platform = await new TestPlatform().start()
    browser = await launchBrowser()
  }, 60_000)
  afterAll(async () => {
    await browser?.close()
    await platform?.stop()
    await t?.close()
  })

  it('registers from the platform’s iframe and hands the administrator back with org.imsglobal.lti.close', async () => {
    const link = await createRegistrationLink(
      t.storage.db,
      { organisationId: t.fixtures.orgs.acme, schoolId: null },
      OPERATOR,
      t.clock,
    )
    const context = await browser!.newContext()
    const page = await context.newPage()
    const consoleErrors: string[] = []
    page.on('console', (message) => {
      if (message.type() === 'error') consoleErrors.push(message.text())
    })
    try {
      await page.goto(platform.registrationPageUrl(`${t.base}/lti/register/${link.token}`))
      expect(await textOf(page.locator('#closed'))).toBe(`org.imsglobal.lti.close from ${t.base}`)
      const frame = page.frameLocator('#tool')
      expect(await textOf(frame.getByRole('heading', { level: 1 }))).toBe('Registration received')
      await screenshot(page, 'lti-registration-closed')
      // The script ran under the page's CSP: no violation was reported.
      expect(consoleErrors.filter((text) => /Content Security Policy/i.test(text))).toEqual([])
      expect(await context.cookies()).toEqual([])

      const toolFrame = page.frames().find((f) => f.url().startsWith(`${t.base}/lti/register/`))!
      expect(describeViolations(await seriousViolations(toolFrame))).toEqual([])
    } finally {
      await context.close()
    }
    const [row] = await listRegistrations(t.storage.db)
    expect(row).toMatchObject({ status: 'pending', method: 'dynamic', client_id: platform.clientId })
  })
})
