/**
 * Two-step sign-in in a real browser against a real server process: a partner sets it up from the
 * Account page (QR code and key, a code from the key, the recovery codes once), signs out, and
 * signs in again through the code step. Each page is checked with axe-core; two are photographed.
 */
import net from 'node:net'
import type { Browser, Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { CATALOG_DIR, tempDir } from '../helper.js'
import { type RunningServer, startServer } from '../server/process.js'
import { authenticatorCode } from '../support/authenticator.js'
import { hasChromium, launchBrowser, screenshot, signIn, textOf } from '../support/browser.js'
import { expectAccessible, VIEWPORT } from '../support/demo-dashboard.js'

/** A port nothing listens on now, for a server whose address must be known before it starts. */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = net.createServer()
    probe.once('error', reject)
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as net.AddressInfo
      probe.close(() => resolve(port))
    })
  })
}

describe.skipIf(!hasChromium())('two-step sign-in in a browser', () => {
  let server: RunningServer | undefined
  let browser: Browser | undefined
  let page: Page
  const email = 'two-step@partner.example'
  const password = 'a long and memorable phrase'

  beforeAll(async () => {
    // A port known before start: PUBLIC_URL (http://localhost:<port>) is the passkeys' origin.
    const port = await freePort()
    server = await startServer({ DATABASE_URL: `sqlite:${tempDir()}/two-step.db`, CATALOG_DIR, PORT: String(port) })
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

  it('adds a passkey with Chromium’s virtual authenticator, then signs in with it alone', async () => {
    // WebAuthn takes a host name, not an address: the server's PUBLIC_URL is http://localhost:<port>.
    const base = server!.baseUrl.replace('127.0.0.1', 'localhost')
    const cdp = await page.context().newCDPSession(page)
    await cdp.send('WebAuthn.enable')
    const { authenticatorId } = await cdp.send('WebAuthn.addVirtualAuthenticator', {
      options: {
        protocol: 'ctap2',
        transport: 'internal',
        hasResidentKey: true,
        hasUserVerification: true,
        isUserVerified: true,
        automaticPresenceSimulation: true,
      },
    })
    // A partner of its own, so that no authenticator code of this half-minute is needed again.
    const own = 'passkey@partner.example'
    await page.goto(`${base}/dashboard/signup`)
    await page.getByLabel('Work e-mail address').fill(own)
    await page.getByLabel('Password').fill(password)
    await page.getByRole('button', { name: 'Create account' }).click()
    await signIn(page, own, password)
    await page.goto(`${base}/dashboard/account`)
    await page.getByLabel('Name of the new passkey').fill('virtual key')
    await page.getByRole('button', { name: 'Add a passkey' }).click()
    expect(await textOf(page.getByRole('status'))).toContain('The passkey is added')
    expect(await textOf(page.locator('#passkeys + p + .table-wrap td').first())).toBe('virtual key')
    await screenshot(page, '28-passkeys')
    await expectAccessible(page, 'passkeys')
    // The authenticator holds one discoverable credential for this site: the one just added.
    const { credentials } = await cdp.send('WebAuthn.getCredentials', { authenticatorId })
    expect(credentials.map((c) => [c.rpId, c.isResidentCredential])).toEqual([['localhost', true]])

    await page.getByRole('button', { name: 'Sign out', exact: true }).click()
    await page.getByRole('button', { name: 'Sign in with a passkey' }).click()
    await page.waitForURL(`${base}/dashboard/partner`).catch(async () => {
      throw new Error(`no sign-in: ${await page.locator('[data-passkey-status]').allTextContents()}`)
    })
    expect(await textOf(page.getByRole('heading', { level: 1 }))).toBe('Overview')
  })
})
