/**
 * Two-step sign-in in a real browser against a real server process: a partner sets it up from the
 * Account page (QR code and key, a code from the key, the recovery codes once), signs out, and
 * signs in again through the code step. Each page is checked with axe-core; two are photographed.
 */
import type { Browser, Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { CATALOG_DIR, tempDir } from '../helper.js'
import { type RunningServer, startServer } from '../server/process.js'
import { authenticatorCode } from '../support/authenticator.js'
import { hasChromium, launchBrowser, screenshot, signIn, textOf } from '../support/browser.js'
import { expectAccessible, VIEWPORT } from '../support/demo-dashboard.js'

describe.skipIf(!hasChromium())('two-step sign-in in a browser', () => {
  let server: RunningServer | undefined
  let browser: Browser | undefined
  let page: Page
  const email = 'two-step@partner.example'
  const password = 'a long and memorable phrase'

  beforeAll(async () => {
    server = await startServer({ DATABASE_URL: `sqlite:${tempDir()}/two-step.db`, CATALOG_DIR })
    browser = await launchBrowser()
    // JavaScript on, for axe-core; the pages work the same without it.
    page = await (await browser.newContext({ viewport: VIEWPORT })).newPage()
    page.setDefaultTimeout(10_000)
  }, 60_000)

  afterAll(async () => {
    await browser?.close()
    await server?.stop()
  })

  it('sets up two-step sign-in, then signs in with a code', async () => {
    await page.goto(`${server!.baseUrl}/dashboard/signup`)
    await page.getByLabel('Work e-mail address').fill(email)
    await page.getByLabel('Password').fill(password)
    await page.getByRole('button', { name: 'Create account' }).click()
    await signIn(page, email, password)
    expect(await textOf(page.getByRole('heading', { level: 1 }))).toBe('Welcome')

    await page.goto(`${server!.baseUrl}/dashboard/account`)
    await page.getByRole('link', { name: 'Set up two-step sign-in' }).click()
    await page.getByRole('button', { name: 'Set up two-step sign-in' }).click()
    await page.getByRole('img', { name: /QR code that adds this account/ }).waitFor()
    await screenshot(page, '25-two-step-setup')
    await expectAccessible(page, 'two-step setup')
    const secret = (await textOf(page.locator('#totp-secret'))).replace(/ /g, '')
    // The enrolment's code is the step before the sign-in's, as the authenticator helper expects.
    await page.getByLabel('Code from the app').fill(await authenticatorCode(secret))
    await page.getByRole('button', { name: 'Turn on two-step sign-in' }).click()
    expect(await textOf(page.getByRole('heading', { level: 1 }))).toBe('Your recovery codes')
    expect(await page.locator('.recovery-codes li').count()).toBe(10)
    await expectAccessible(page, 'recovery codes')

    await page.getByRole('button', { name: 'Sign out' }).click()
    await signIn(page, email, password)
    expect(await textOf(page.getByRole('heading', { level: 1 }))).toBe('Enter your code')
    await screenshot(page, '26-two-step-code')
    await expectAccessible(page, 'two-step code')
    await page.getByLabel('Code').fill(await authenticatorCode(secret))
    await page.getByRole('button', { name: 'Continue' }).click()
    expect(await textOf(page.getByRole('heading', { level: 1 }))).toBe('Overview')
  })
})
