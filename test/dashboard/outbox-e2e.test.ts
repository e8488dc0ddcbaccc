/// <reference lib="dom" />
/**
 * The Outbox in a real browser with JavaScript off, against a real server process whose SMTP_URL
 * names a real SMTP server started here: the operator sends a test message, the server refuses it
 * for good, the operator reads it and sends it again, and it arrives once. Each page is checked
 * with axe-core and photographed.
 */
import type { BrowserContext, Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { CATALOG_DIR, tempDir } from '../helper.js'
import { hasChromium, textOf } from '../support/browser.js'
import { checkPage, closeDemo, type DemoOperator, signInDemoOperator } from '../support/demo-dashboard.js'
import { SmtpTestServer } from '../support/smtp-test-server.js'
import { waitFor } from '../support/wait-for.js'

describe.skipIf(!hasChromium())('the outbox in a browser', () => {
  let demo: DemoOperator | undefined
  let smtp: SmtpTestServer | undefined
  let operator: Page
  let operatorContext: BrowserContext
  const check = (name: string) => checkPage(demo!.checker, operator, operatorContext, name)

  /** Reloads the page until its messages table says `state`, as the server's worker gets to it. */
  const untilState = (state: string) =>
    waitFor(
      async () => {
        await operator.reload()
        return (await operator.locator('tbody .state').first().textContent()) === state
      },
      { what: `a message ${state}`, timeoutMs: 20_000, intervalMs: 250 },
    )

  beforeAll(async () => {
    smtp = new SmtpTestServer()
    await smtp.start()
    smtp.script = [{ rcpt: 550, text: 'No such user here' }]
    demo = await signInDemoOperator({
      DATABASE_URL: `sqlite:${tempDir()}/outbox.db`,
      CATALOG_DIR,
      SMTP_URL: smtp.url,
      MAIL_FROM: 'Curriculum API <no-reply@curriculum.test>',
    })
    ;({ operator, operatorContext } = demo)
  }, 60_000)

  afterAll(async () => {
    await closeDemo(demo)
    await smtp?.stop()
  })

  it('sends a test message; one refused for good is read there and sent again when asked', async () => {
    expect(demo!.server.output()).toContain('mail sent through SMTP_URL')
    await operator.getByRole('link', { name: 'Outbox', exact: true }).click()
    expect(await textOf(operator.getByRole('heading', { level: 1 }))).toBe('Outbox')
    expect(await textOf(operator.locator('.empty'))).toBe('No message yet.')
    await check('50-outbox-empty')

    await operator.getByRole('button', { name: 'Send a test message' }).click()
    expect(await textOf(operator.locator('.error-summary'))).toContain('Enter one e-mail address')
    await check('51-outbox-refused')

    await operator.getByLabel('To', { exact: true }).fill('ops@example.org')
    await operator.getByRole('button', { name: 'Send a test message' }).click()
    expect(await textOf(operator.getByRole('status'))).toContain('Test message 1 was queued')
    await untilState('failed')
    const row = operator.locator('tbody tr').first()
    expect(await textOf(row)).toContain('550 No such user here')
    await row.getByText('Read').click()
    expect(await textOf(row.locator('pre'))).toContain('This is a test message from the Curriculum API')
    await check('52-outbox-failed')

    await row.getByRole('button', { name: /Send again/ }).click()
    expect(await textOf(operator.getByRole('status'))).toContain('Message 1 was queued again')
    await untilState('sent')
    expect(smtp!.arrived.map((m) => m.to)).toEqual([['ops@example.org']])
    await check('53-outbox-sent')
  })
})
