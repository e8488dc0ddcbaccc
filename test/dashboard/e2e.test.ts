/// <reference lib="dom" />
/**
 * The whole flow in a real browser against a real server process: a partner signs up, signs in
 * and applies; the operator approves and records an agreement; the partner creates a student key,
 * and that key reads a student's progress through /api/v1; a link on another site reaches the
 * Students page only through its continue page; the operator revokes the key and the API
 * refuses it within 5 s. Every page visited is checked with axe-core and photographed.
 */
import fs from 'node:fs'
import path from 'node:path'
import type { Browser, BrowserContext, Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { listDisclosures } from '../../src/storage/disclosure-log.js'
import { cli, jsonOf, withStorage } from '../cli/cli-harness.js'
import { CATALOG_DIR, tempDir } from '../helper.js'
import { type RunningServer, startServer } from '../server/process.js'
import { hasChromium, launchBrowser, screenshot, signIn, textOf } from '../support/browser.js'
import { waitFor } from '../support/wait-for.js'
import { demoOperatorLogin, expectAccessible, VIEWPORT } from '../support/demo-dashboard.js'

describe.skipIf(!hasChromium())('dashboard in a browser', () => {
  const databaseUrl = `sqlite:${path.join(tempDir(), 'dashboard.db')}`
  let server: RunningServer
  let browser: Browser
  let partnerContext: BrowserContext
  let operatorContext: BrowserContext
  let partner: Page
  let operator: Page
  let operatorEmail: string
  let operatorPassword: string
  let operatorTotp: string
  let demoStudent: string
  let liveKey: string
  /** The request id of the enroll refused 403 (insufficient_scope), as its problem gave it. */
  let refusedRequestId: string
  const partnerEmail = 'dev@acme-learning.example'
  const partnerPassword = 'a long and memorable phrase'
  const url = (p: string) => `${server.baseUrl}${p}`

  /** The path of the newest held message of `kind`, from the log line that names it (SMTP_URL is unset). */
  async function heldLink(kind: string): Promise<string> {
    const pattern = new RegExp(`${kind} message \\d+, .*?link: https?://[^/\\s]+(/dashboard/[^\\s;"]+)`, 'g')
    let path: string | undefined
    await waitFor(() => (path = [...server.output().matchAll(pattern)].at(-1)?.[1]) !== undefined, {
      what: `a held ${kind} message in the log`,
    })
    return path!
  }

  async function check(page: Page, name: string): Promise<void> {
    await screenshot(page, name)
    await expectAccessible(page, name)
  }

  beforeAll(async () => {
    server = await startServer({ DATABASE_URL: databaseUrl, CATALOG_DIR, CHANGE_POLL_MS: '1000' })
    const out = server.output()
    ;({ email: operatorEmail, password: operatorPassword, totpSecret: operatorTotp } = demoOperatorLogin(out))
    demoStudent = /Demo student: \w+ \(\w+\), id ([0-9a-f-]{36})/.exec(out)![1]!
    browser = await launchBrowser()
    partnerContext = await browser.newContext({ viewport: VIEWPORT })
    operatorContext = await browser.newContext({ viewport: VIEWPORT })
    partner = await partnerContext.newPage()
    operator = await operatorContext.newPage()
  }, 60_000)

  afterAll(async () => {
    await browser?.close()
    await server?.stop()
  })

  it('a partner signs up, signs in and gets a sandbox with a working test key at once', async () => {
    await partner.goto(url('/dashboard/signup'))
    await check(partner, '01-sign-up')
    await partner.getByLabel('Work e-mail address').fill(partnerEmail)
    await partner.getByLabel('Password').fill(partnerPassword)
    await partner.getByRole('button', { name: 'Create account' }).click()
    // Sign-up says the same whether or not the address had an account: sign in to continue.
    expect(await textOf(partner.getByRole('status'))).toContain('If this address is new')
    await check(partner, '01b-signed-up')
    await signIn(partner, partnerEmail, partnerPassword)
    expect(await textOf(partner.getByRole('heading', { level: 1 }))).toBe('Welcome')
    const testKey = await partner.getByLabel(/API key/).inputValue()
    expect(testKey).toMatch(/^cur_test_/)
    await check(partner, '02-welcome-test-key')
    // The sign-in answered 303 to the key's own page: reloading shows the key again, no form re-sent.
    await partner.reload()
    expect(await textOf(partner.getByRole('heading', { level: 1 }))).toBe('Welcome')
    expect(await partner.getByLabel(/API key/).inputValue()).toBe(testKey)
    // The curl examples work as pasted: run each one's request exactly as written.
    for (const example of await partner.locator('pre.example').allTextContents()) {
      const [, method = 'GET'] = /-X (\w+)/.exec(example) ?? []
      const authorization = /'Authorization: (Bearer [^']+)'/.exec(example)![1]!
      const body = /-d '([^']+)'/.exec(example)?.[1]
      const target = /(http:\/\/\S+)$/.exec(example.trim())![1]!
      const res = await fetch(target, {
        method,
        headers: { authorization, ...(body ? { 'content-type': 'application/json' } : {}) },
        ...(body ? { body } : {}),
      })
      expect(res.status, example).toBe(200)
    }
    // ...and never a real student.
    const real = await fetch(url(`/api/v1/students/${demoStudent}/progress`), {
      headers: { authorization: `Bearer ${testKey}` },
    })
    expect(real.status).toBe(404)
  })

  it('the partner applies for live access and sees it submitted', async () => {
    await partner.goto(url('/dashboard/partner'))
    await check(partner, '03-partner-overview')
    await partner.goto(url('/dashboard/partner/application'))
    // Live access needs a verified address: the link mailed at sign-up, named in the log without SMTP_URL.
    expect(await textOf(partner.getByRole('heading', { level: 1 }))).toBe('Verify your address to apply')
    await check(partner, '03b-verify-first')
    await partner.goto(url(await heldLink('verify-email')))
    await check(partner, '03c-verify-email')
    await partner.getByRole('button', { name: 'Confirm my address' }).click()
    expect(await textOf(partner.getByRole('status'))).toContain('Your e-mail address is verified.')
    await partner.goto(url('/dashboard/partner/application'))
    await partner.getByRole('button', { name: 'Submit application' }).click()
    await partner.locator('.error-summary').waitFor()
    await check(partner, '04-application-errors')
    await partner.getByLabel('Organisation name').fill('Acme Learning')
    await partner.getByLabel('Website').fill('https://acme-learning.example')
    await partner.getByLabel('Contact person').fill('Dana Developer')
    await partner.getByLabel('Contact e-mail address').fill('dana@acme-learning.example')
    await partner
      .getByLabel('Intended use')
      .fill('A reading-practice app for schools that shows each learner their next lesson.')
    await partner.getByLabel(/Student read/).check()
    await partner.getByLabel(/I understand that student access needs/).check()
    await partner.getByRole('button', { name: 'Submit application' }).click()
    expect(await textOf(partner.getByRole('status'))).toContain('3-5 business days')
    expect(await textOf(partner.locator('.state'))).toBe('submitted')
    await check(partner, '05-application-submitted')
  })

  it('the operator approves the application and records an agreement', async () => {
    await operator.goto(url('/dashboard/login'))
    await check(operator, '06-sign-in')
    await signIn(operator, operatorEmail, operatorPassword, operatorTotp)
    expect(await textOf(operator.getByRole('heading', { level: 1 }))).toBe('Applications')
    await check(operator, '07-review-queue')
    const card = operator.locator('section.card', { hasText: 'Acme Learning' })
    await card.getByRole('button', { name: 'Approve' }).click()
    expect(await textOf(operator.getByRole('status'))).toContain('approved')
    await operator.goto(url('/dashboard/operator/organisations'))
    await check(operator, '08-organisations')
    await operator.getByRole('link', { name: 'Acme Learning' }).click()
    await operator.getByText('Record a signed agreement').click()
    await operator.getByLabel('Signed on').fill(new Date().toISOString().slice(0, 10))
    await operator.getByLabel('Document reference').fill('DSA-2026-014')
    await operator.getByLabel('Purpose').fill('Reading practice: show each learner their next lesson')
    // Every kind of data and the configured disposition period are filled in already; share no progress.
    await operator.getByLabel('progress', { exact: true }).uncheck()
    await operator.getByRole('button', { name: 'Record agreement' }).click()
    expect(await textOf(operator.getByRole('status'))).toContain('was recorded. It is in force: student endpoints work')
    await check(operator, '09-organisation')
    // Suspending asks first, on a page naming the organisation and what stops; reinstating is one click.
    await operator.getByRole('link', { name: /Suspend organisation/ }).click()
    expect(await textOf(operator.getByRole('heading', { level: 1 }))).toBe('Suspend Acme Learning?')
    expect(await textOf(operator.locator('main'))).toContain('403 organisation_suspended')
    await check(operator, '09b-suspend-confirm')
    await operator.getByRole('button', { name: 'Suspend Acme Learning' }).click()
    expect(await textOf(operator.getByRole('status'))).toContain('The organisation is suspended')
    await operator.getByRole('button', { name: 'Reinstate organisation' }).click()
    expect(await textOf(operator.getByRole('status'))).toContain('The organisation is reinstated')
  })

  it('the partner creates a live student key that reads a linked student through the API', async () => {
    // The operator links a real (demo) student to the new organisation, as for any partner.
    const links = path.join(tempDir(), 'links.jsonl')
    fs.writeFileSync(links, `${JSON.stringify({ studentId: demoStudent, organisation: 'Acme Learning' })}\n`)
    expect(jsonOf(await cli(['links', 'import', links, '--json'], { databaseUrl })).ok).toBe(true)

    await partner.goto(url('/dashboard/partner'))
    await partner.getByText('Create a live key').click()
    await partner.getByLabel('Name', { exact: true }).first().fill('production')
    await partner.getByRole('button', { name: 'Create live key' }).click()
    expect(await textOf(partner.getByRole('heading', { level: 1 }))).toBe('Key created')
    liveKey = await partner.getByLabel(/API key/).inputValue()
    expect(liveKey).toMatch(/^cur_live_/)
    await check(partner, '10-live-key-created')
    await partner.reload()
    expect(await partner.getByLabel(/API key/).inputValue()).toBe(liveKey)
    // The commands name the organisation's linked student, so they work as pasted.
    expect(await partner.locator('pre.example').allTextContents()).toEqual([
      expect.stringContaining('/api/v1/tiers'),
      expect.stringContaining(demoStudent),
    ])
    const res = await fetch(url(`/api/v1/students/${demoStudent}/progress`), {
      headers: { authorization: `Bearer ${liveKey}` },
    })
    expect(res.status).toBe(200)
    // Not granted: the operator approved read only.
    const enroll = await fetch(url(`/api/v1/students/${demoStudent}/enroll`), {
      method: 'POST',
      headers: { authorization: `Bearer ${liveKey}`, 'content-type': 'application/json' },
      body: '{"tier":"builder"}',
    })
    expect(enroll.status).toBe(403)
    refusedRequestId = ((await enroll.json()) as { requestId: string }).requestId
    // The overview lists only the key's prefix.
    await partner.goto(url('/dashboard/partner'))
    expect(await partner.content()).not.toContain(liveKey)
  })

  it('the partner reads its agreement: purpose, data shared, term and disposition rule', async () => {
    await partner.goto(url('/dashboard/partner'))
    const terms = await textOf(partner.getByRole('table', { name: 'Data-sharing agreements' }))
    for (const part of ['DSA-2026-014', 'Reading practice: show each learner their next lesson', 'first name and tier'])
      expect(terms).toContain(part)
    expect(terms).toMatch(/from \d{4}-\d\d-\d\d, open-ended/)
    expect(terms).toContain('delete within 30 days of its end')
    await check(partner, '10b-partner-agreement')
  })

  it('the partner sees usage and the disclosure log', async () => {
    await partner.goto(url('/dashboard/partner/usage'))
    await partner.locator('svg.chart').first().waitFor()
    await check(partner, '11-usage')
    await partner.goto(url('/dashboard/partner/disclosures'))
    expect(await textOf(partner.locator('table'))).toContain('progress.read')
    await check(partner, '12-partner-disclosures')
  })

  it("the partner finds the refused enroll in the request log by its problem's request id", async () => {
    await partner.goto(url('/dashboard/partner'))
    await partner.getByRole('link', { name: 'Request log' }).click()
    expect(await textOf(partner.getByRole('table', { name: 'Request log' }))).toContain('/api/v1/students/:id/enroll')
    await check(partner, '11b-request-log')
    await partner.getByLabel('Request id').fill(refusedRequestId)
    await partner.getByRole('button', { name: 'Find the request' }).click()
    const entry = await textOf(partner.getByRole('region', { name: /^Request / }))
    for (const part of [
      refusedRequestId,
      'POST /api/v1/students/:id/enroll',
      '403',
      'insufficient_scope',
      'production',
    ])
      expect(entry).toContain(part)
    expect(entry).not.toContain(demoStudent)
    expect(new URL(partner.url()).hash).toBe('#entry')
    await check(partner, '11c-request-log-entry')
  })

  it('the partner invites a developer, who signs up with the invited address and joins through the link', async () => {
    await partner.goto(url('/dashboard/partner/members'))
    await partner.getByLabel('E-mail address').fill('dev2@acme-learning.example')
    await partner.getByLabel('Role', { exact: true }).selectOption('developer')
    await partner.getByRole('button', { name: 'Send the invitation' }).click()
    expect(await textOf(partner.getByRole('status'))).toContain('The invitation is sent')
    await check(partner, '24-members')
    const context = await browser.newContext({ viewport: VIEWPORT })
    try {
      const dev = await context.newPage()
      await dev.goto(url('/dashboard/signup'))
      await dev.getByLabel('Work e-mail address').fill('dev2@acme-learning.example')
      await dev.getByLabel('Password').fill(partnerPassword)
      await dev.getByRole('button', { name: 'Create account' }).click()
      await signIn(dev, 'dev2@acme-learning.example', partnerPassword)
      await dev.goto(url(await heldLink('invitation')))
      expect(await textOf(dev.getByRole('heading', { level: 1 }))).toBe('Join an organisation')
      await check(dev, '24b-join')
      await dev.getByRole('button', { name: 'Join Acme Learning' }).click()
      expect(await textOf(dev.getByRole('status'))).toContain('You joined the organisation.')
      expect(await textOf(dev.locator('main'))).toContain('You are a developer')
    } finally {
      await context.close()
    }
  })

  it('a link on another site opens the Students page only through a continue page, which discloses nothing', async () => {
    const listed = () =>
      withStorage(databaseUrl, async ({ db }) => (await listDisclosures(db, { action: 'students.list' })).length)
    const attacker = async (page: Page) => {
      await page.route('http://attacker.test/**', (route) =>
        route.fulfill({
          contentType: 'text/html',
          body: `<!doctype html><title>Prize</title><a href="${url('/dashboard/partner/students')}">Claim</a>`,
        }),
      )
      await page.goto('http://attacker.test/')
      await page.getByRole('link', { name: 'Claim' }).click()
      expect(await textOf(page.getByRole('heading', { level: 1 }))).toBe('Open this page?')
    }
    const before = await listed()
    await attacker(partner)
    expect(await partner.content()).not.toContain(demoStudent)
    await check(partner, '12c-continue-page')
    expect(await listed()).toBe(before)
    await partner.getByRole('link', { name: 'Continue to the page' }).click()
    expect(await textOf(partner.getByRole('heading', { level: 1 }))).toBe('Students')
    expect(await textOf(partner.locator('table'))).toContain(demoStudent)
    expect(await listed()).toBe(before + 1)
    // The same without JavaScript: the continue page is a plain link.
    const noScript = await browser.newContext({
      javaScriptEnabled: false,
      storageState: await partnerContext.storageState(),
    })
    try {
      const page = await noScript.newPage()
      await attacker(page)
      expect(await listed()).toBe(before + 1)
      await page.getByRole('link', { name: 'Continue to the page' }).click()
      expect(await textOf(page.locator('table'))).toContain(demoStudent)
      expect(await listed()).toBe(before + 2)
    } finally {
      await noScript.close()
    }
  })

  it('the operator revokes the key and the API refuses it within 5 s', async () => {
    await operator.goto(url('/dashboard/operator/organisations'))
    await operator.getByRole('link', { name: 'Acme Learning' }).click()
    await operator.getByRole('link', { name: /Revoke key/ }).click()
    // One click only asks: the page names the key and what breaks.
    expect(await textOf(operator.getByRole('heading', { level: 1 }))).toBe('Revoke this key?')
    expect(await textOf(operator.locator('main'))).toContain('production')
    expect(await textOf(operator.locator('main'))).toContain('401 Unauthorized')
    await check(operator, '12b-revoke-confirm')
    await operator.getByRole('button', { name: /Revoke key/ }).click()
    expect(await textOf(operator.getByRole('status'))).toContain('revoked')
    const started = Date.now()
    let status = 0
    while (Date.now() - started < 5000) {
      status = (await fetch(url('/api/v1/tiers'), { headers: { authorization: `Bearer ${liveKey}` } })).status
      if (status === 401) break
      await new Promise((resolve) => setTimeout(resolve, 100))
    }
    expect(status).toBe(401)
    await operator.goto(url('/dashboard/operator/request-log'))
    expect(await textOf(operator.getByRole('table', { name: 'Request log' }))).toContain('Acme Learning')
    await check(operator, '13a-operator-request-log')
    await operator.goto(url('/dashboard/operator/disclosures'))
    await check(operator, '13-operator-disclosures')
    // A student's report: every disclosure with the agreement it was under, and its downloads.
    await operator.getByRole('link', { name: demoStudent }).first().click()
    expect(await textOf(operator.getByRole('heading', { level: 1 }))).toBe('Student disclosure report')
    const records = await textOf(operator.getByRole('table', { name: 'Disclosure records' }))
    expect(records).toContain('key production')
    expect(records).toContain('DSA-2026-014')
    // The agreement shares no progress, which a progress read handed over all the same: marked.
    expect(records).toContain('first name, tier, progress (progress: not in the agreement)')
    const agreements = await textOf(operator.getByRole('table', { name: 'Agreements the records were under' }))
    expect(agreements).toContain('Reading practice: show each learner their next lesson')
    await check(operator, '13c-student-report')
    const [download] = await Promise.all([
      operator.waitForEvent('download'),
      operator.getByRole('link', { name: 'Download CSV' }).click(),
    ])
    expect(download.suggestedFilename()).toMatch(new RegExp(`^disclosures-${demoStudent}-\\d{4}-\\d\\d-\\d\\d\\.csv$`))
    const csv = fs.readFileSync((await download.path())!, 'utf8')
    expect(csv.split('\r\n')[0]).toMatch(/^"at","student_id","student_external_id","action"/)
    expect(csv).toContain('"DSA-2026-014","Reading practice: show each learner their next lesson","first_name tier"')
    await operator.goto(url('/dashboard/partner'))
    expect(await textOf(operator.getByRole('heading', { level: 1 }))).toBe('Not for this account')
    await check(operator, '13b-not-for-this-account')
    await operator.goto(url('/dashboard/operator/audit'))
    expect(await textOf(operator.locator('table'))).toContain('key.revoke')
    expect(await textOf(operator.locator('table'))).toContain('application.approve')
    await check(operator, '14-audit-log')
  })

  it('opens the service root with links to the reference and the dashboard, and no error in the console', async () => {
    const page = await browser.newPage()
    const errors: string[] = []
    page.on('console', (message) => {
      if (message.type() === 'error') errors.push(message.text())
    })
    page.on('response', (response) => {
      if (response.status() >= 400) errors.push(`${response.status()} ${response.url()}`)
    })
    await page.goto(url('/'))
    expect(await textOf(page.getByRole('heading', { level: 1 }))).toBe('Curriculum API')
    await page.getByRole('link', { name: 'Dashboard' }).click()
    expect(await textOf(page.getByRole('heading', { level: 1 }))).toBe('Sign in')
    await page.goto(url('/'))
    await page.getByRole('link', { name: 'API reference' }).click()
    await page.waitForURL(/\/docs$/)
    // The browser asks for /favicon.ico on its own; a 404 there would show in the console.
    const favicon = await fetch(url('/favicon.ico'))
    expect(favicon.status).toBe(204)
    expect(errors).toEqual([])
    await page.close()
  })

  it('reaches the webhooks chapter from the reference: accessible, and nothing refused by its CSP', async () => {
    const page = await browser.newPage()
    const errors: string[] = []
    // A CSP refusal (a script, an outside stylesheet) shows as a console error.
    page.on('console', (message) => {
      if (message.type() === 'error') errors.push(message.text())
    })
    await page.goto(url('/docs'))
    await page.getByRole('link', { name: 'the webhooks chapter' }).click()
    await page.waitForURL(/\/docs\/webhooks$/)
    expect(await textOf(page.getByRole('heading', { level: 1 }))).toBe('Webhooks')
    await check(page, '16-docs-webhooks')
    expect(errors).toEqual([])
    await page.close()
  })

  it('reads well on a phone', async () => {
    const phone = await browser.newContext({ viewport: { width: 390, height: 844 }, isMobile: true })
    const page = await phone.newPage()
    await page.goto(url('/dashboard/login'))
    await signIn(page, partnerEmail, partnerPassword)
    expect(await textOf(page.getByRole('heading', { level: 1 }))).toBe('Overview')
    await check(page, '15-phone-overview')
    // Nothing wider than the screen but the tables, which scroll inside their own box.
    const overflow = await page.evaluate(
      () => document.documentElement.scrollWidth - document.documentElement.clientWidth,
    )
    expect(overflow).toBeLessThanOrEqual(0)
    await page.getByRole('button', { name: 'Sign out' }).click()
    expect(await textOf(page.getByRole('status'))).toContain('signed out')
    await page.goto(url('/dashboard/partner'))
    expect(await textOf(page.getByRole('heading', { level: 1 }))).toBe('Sign in')
    await phone.close()
  })
})
