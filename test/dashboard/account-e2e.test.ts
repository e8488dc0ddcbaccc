/// <reference lib="dom" />
/**
 * A forgotten password and the Account page in a real browser against a real server process
 * (SMTP_URL unset, so the reset link is read from the log line that names the held message): the
 * operator asks for a link, chooses a new password through it, signs in with it and changes it
 * again on the Account page. Each page is checked with axe-core and photographed.
 */
import path from 'node:path'
import type { Browser, Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { CATALOG_DIR, tempDir } from '../helper.js'
import { type RunningServer, startServer } from '../server/process.js'
import { hasChromium, launchBrowser, screenshot, signIn, textOf } from '../support/browser.js'
import { demoOperatorLogin, expectAccessible, VIEWPORT } from '../support/demo-dashboard.js'
import { waitFor } from '../support/wait-for.js'

describe.skipIf(!hasChromium())('password recovery and the Account page in a browser', () => {
  let server: RunningServer | undefined
  let browser: Browser | undefined
  let page: Page
  const url = (p: string) => `${server!.baseUrl}${p}`

  /** The path of the newest held message of `kind`, from the log line that names it. */
  async function heldLink(kind: string): Promise<string> {
    const pattern = new RegExp(`${kind} message \\d+, .*?link: https?://[^/\\s]+(/dashboard/[^\\s;"]+)`, 'g')
    let found: string | undefined
    await waitFor(() => (found = [...server!.output().matchAll(pattern)].at(-1)?.[1]) !== undefined, {
      what: `a held ${kind} message in the log`,
    })
    return found!
  }

  async function check(name: string): Promise<void> {
    await screenshot(page, name)
    await expectAccessible(page, name)
  }

  beforeAll(async () => {
    server = await startServer({ DATABASE_URL: `sqlite:${path.join(tempDir(), 'accounts.db')}`, CATALOG_DIR })
    browser = await launchBrowser()
    page = await (await browser.newContext({ viewport: VIEWPORT })).newPage()
    page.setDefaultTimeout(10_000)
  }, 60_000)

  afterAll(async () => {
    await browser?.close()
    await server?.stop()
  })

  it('resets a forgotten password through its link, signs in with it and changes it on the Account page', async () => {
    const { email, totpSecret } = demoOperatorLogin(server!.output())
    const chosen = 'seven orange kites over the harbour'
    const changed = 'a quiet library on a rainy tuesday'

    await page.goto(url('/dashboard/login'))
    await page.getByRole('link', { name: 'Forgot your password?' }).click()
    expect(await textOf(page.getByRole('heading', { level: 1 }))).toBe('Forgot your password?')
    await check('20-forgot-password')
    await page.getByLabel('E-mail address').fill(email)
    await page.getByRole('button', { name: 'Send me a link' }).click()
    expect(await textOf(page.getByRole('status'))).toContain('If an account has this address')

    await page.goto(url(await heldLink('password-reset')))
    expect(await textOf(page.getByRole('heading', { level: 1 }))).toBe('Choose a new password')
    expect(await textOf(page.locator('main strong'))).toBe(email)
    await check('21-reset-password')
    await page.getByLabel('New password').fill(chosen)
    await page.getByRole('button', { name: 'Set the new password' }).click()
    expect(await textOf(page.getByRole('status'))).toContain('Your new password is set')

    await signIn(page, email, chosen, totpSecret)
    expect(await textOf(page.getByRole('heading', { level: 1 }))).toBe('Applications')
    await page.getByRole('link', { name: 'Account', exact: true }).click()
    expect(await textOf(page.getByRole('heading', { level: 1 }))).toBe('Your account')
    const cells = page.locator('tbody tr', { hasText: 'This session' }).locator('td')
    expect(await textOf(cells.nth(0))).toBe('Chrome on Linux')
    expect(await textOf(cells.nth(1))).toBe('127.0.0.1')
    await check('22-account')

    const form = page.locator('form', { has: page.getByRole('button', { name: 'Change password' }) })
    await form.getByLabel('Current password').fill(chosen)
    await form.getByLabel('New password').fill(changed)
    await form.getByRole('button', { name: 'Change password' }).click()
    expect(await textOf(page.getByRole('status'))).toContain('Your password is changed')
    await check('23-password-changed')

    // The change holds: signed out, the new password signs in again.
    await page.getByRole('button', { name: 'Sign out', exact: true }).click()
    await signIn(page, email, changed, totpSecret)
    expect(await textOf(page.getByRole('heading', { level: 1 }))).toBe('Applications')
  })
})
