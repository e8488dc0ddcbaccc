/**
 * The dashboard as the browser tests drive it: a real server process started on its demo data,
 * its demo operator signed in with JavaScript off (every page must work without it), and a
 * second session with JavaScript on, in which axe-core checks each page.
 */
import type { Browser, BrowserContext, Page } from 'playwright-core'
import { expect } from 'vitest'
import { type RunningServer, startServer } from '../server/process.js'
import { describeViolations, launchBrowser, screenshot, seriousViolations, signIn, textOf } from './browser.js'

export const VIEWPORT = { width: 1200, height: 900 }

export interface DemoOperator {
  server: RunningServer
  browser: Browser
  /** The demo operator's page, JavaScript off. */
  operator: Page
  operatorContext: BrowserContext
  /** A page with JavaScript on, which axe-core needs to run. */
  checker: Page
}

/** The demo operator's address, password and authenticator key, which the server prints once, at its first start. */
export function demoOperatorLogin(out: string): { email: string; password: string; totpSecret: string } {
  return {
    email: /Demo operator login: (\S+)/.exec(out)![1]!,
    password: /Demo operator password \(shown once\): (\S+)/.exec(out)![1]!,
    totpSecret: /Demo operator two-step sign-in key \(shown once\): (\S+)/.exec(out)![1]!,
  }
}

/** Starts the server on `env` and signs its demo operator in, landing on the Applications page. */
export async function signInDemoOperator(env: Record<string, string>): Promise<DemoOperator> {
  const server = await startServer(env)
  let browser: Browser | undefined
  try {
    const { email, password, totpSecret } = demoOperatorLogin(server.output())
    browser = await launchBrowser()
    const operatorContext = await browser.newContext({ viewport: VIEWPORT, javaScriptEnabled: false })
    const operator = await operatorContext.newPage()
    const checker = await (await browser.newContext({ viewport: VIEWPORT })).newPage()
    operator.setDefaultTimeout(10_000)
    await operator.goto(`${server.baseUrl}/dashboard/login`)
    await signIn(operator, email, password, totpSecret)
    expect(await textOf(operator.getByRole('heading', { level: 1 }))).toBe('Applications')
    return { server, browser, operator, operatorContext, checker }
  } catch (error) {
    await closeDemo({ server, browser })
    throw error
  }
}

/** Closes what signInDemoOperator opened, however far it got; for afterAll. */
export async function closeDemo(demo: Partial<Pick<DemoOperator, 'server' | 'browser'>> | undefined): Promise<void> {
  await demo?.browser?.close()
  await demo?.server?.stop()
}

/** Photographs `page`, then checks it at its address with axe in `checker`, holding `context`'s cookies. */
export async function checkPage(checker: Page, page: Page, context: BrowserContext, name: string): Promise<void> {
  await screenshot(page, name)
  await checker.context().clearCookies()
  await checker.context().addCookies(await context.cookies())
  await checker.goto(page.url())
  await expectAccessible(checker, name)
}

/** Fails, naming the page, when axe finds a serious violation on the page `page` shows (JavaScript on). */
export async function expectAccessible(page: Page, name: string): Promise<void> {
  expect(describeViolations(await seriousViolations(page)), `${name}: accessibility`).toEqual([])
}
