/// <reference lib="dom" />
/**
 * The Operators page in a real browser with JavaScript off, against a real server process: the
 * demo operator (an admin) finds it in the navigation, invites an operator and sees the pending
 * invitation; the page is checked with axe-core and photographed (27-operators).
 */
import type { BrowserContext, Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { CATALOG_DIR, tempDir } from '../helper.js'
import { hasChromium, textOf } from '../support/browser.js'
import { checkPage, closeDemo, type DemoOperator, signInDemoOperator, VIEWPORT } from '../support/demo-dashboard.js'
import { waitFor } from '../support/wait-for.js'

describe.skipIf(!hasChromium())('the Operators page in a browser', () => {
  let demo: DemoOperator | undefined
  let operator: Page
  let operatorContext: BrowserContext

  beforeAll(async () => {
    demo = await signInDemoOperator({ DATABASE_URL: `sqlite:${tempDir()}/operators.db`, CATALOG_DIR })
    ;({ operator, operatorContext } = demo)
  }, 60_000)
  afterAll(() => closeDemo(demo))

  it('lists the operators and invites one', async () => {
    await operator.getByRole('link', { name: 'Operators', exact: true }).click()
    expect(await textOf(operator.getByRole('heading', { level: 1 }))).toBe('Operators')
    expect(await textOf(operator.locator('tbody tr').first())).toContain('operator admin')

    await operator.getByLabel('E-mail address').fill('new.operator@example.org')
    await operator.getByLabel('Role', { exact: true }).selectOption('operator')
    await operator.getByRole('button', { name: 'Send the invitation' }).click()
    expect(await textOf(operator.getByRole('status'))).toContain('The invitation is sent')
    expect(await textOf(operator.locator('main'))).toContain('new.operator@example.org')
    await checkPage(demo!.checker, operator, operatorContext, '27-operators')
  })

  it('lets the invited person choose a password, and then asks for two-step sign-in before anything else', async () => {
    // Without SMTP_URL the link is in the log line that names the held message.
    const pattern =
      /invitation message \d+, .*?link: https?:\/\/[^/\s]+(\/dashboard\/invitations\/operator\?token=[\w-]+)/g
    let link: string | undefined
    await waitFor(() => (link = [...demo!.server.output().matchAll(pattern)].at(-1)?.[1]) !== undefined, {
      what: 'the operator invitation in the log',
    })
    const context = await demo!.browser.newContext({ viewport: VIEWPORT, javaScriptEnabled: false })
    try {
      const invited = await context.newPage()
      await invited.goto(`${demo!.server.baseUrl}${link}`)
      expect(await textOf(invited.getByRole('heading', { level: 1 }))).toBe('Become an operator')
      await checkPage(demo!.checker, invited, context, '27b-operator-invitation')
      await invited.getByLabel('Password').fill('a careful operator of this service')
      await invited.getByRole('button', { name: 'Create my operator account' }).click()
      expect(invited.url()).toContain('/dashboard/account/two-step')
      await checkPage(demo!.checker, invited, context, '27c-operator-enrols')
    } finally {
      await context.close()
    }
  })
})
