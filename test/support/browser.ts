/// <reference lib="dom" />
/**
 * Headless Chromium (Debian's package) driven by playwright-core, with axe-core for the
 * accessibility checks. Screenshots go to test-results/ (not committed).
 */
import fs from 'node:fs'
import path from 'node:path'
import { createRequire } from 'node:module'
import { type Browser, chromium, type Frame, type Page } from 'playwright-core'
import { authenticatorCode } from './authenticator.js'

export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium'
export const SCREENSHOTS = path.resolve(import.meta.dirname, '../../test-results/screenshots')

export function hasChromium(): boolean {
  return fs.existsSync(CHROMIUM)
}

/** `extraArgs`: more Chromium flags (e.g. --host-resolver-rules, for pages on made-up hosts). */
export async function launchBrowser(extraArgs: readonly string[] = []): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    // Flags for a closed network and a root user: no sandbox, no background connections.
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      ...extraArgs,
    ],
  })
}

const axeSource = fs.readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8')

export interface AxeViolation {
  id: string
  impact: string | null
  help: string
  nodes: { target: string[] }[]
}

/** Serious and critical axe-core violations on the page as it is now. */
/** Each violation as one line a failing assertion shows: the rule, its help and where. */
export function describeViolations(violations: readonly AxeViolation[]): string[] {
  return violations.map((v) => `${v.id}: ${v.help} at ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`)
}

/** As above, on a page or on the document of one of its frames (an iframe's, as a platform shows an LTI tool). */
export async function seriousViolations(page: Page | Frame): Promise<AxeViolation[]> {
  // Evaluated through the DevTools protocol, so the page's strict CSP does not apply to it.
  await page.evaluate(axeSource)
  const violations = (await page.evaluate(async () => {
    const axe = (
      globalThis as unknown as { axe: { run(context: unknown, options: unknown): Promise<{ violations: unknown[] }> } }
    ).axe
    const result = await axe.run(document, { resultTypes: ['violations'] })
    return result.violations
  })) as AxeViolation[]
  return violations.filter((v) => v.impact === 'serious' || v.impact === 'critical')
}

export async function screenshot(page: Page, name: string): Promise<void> {
  fs.mkdirSync(SCREENSHOTS, { recursive: true })
  await page.screenshot({ path: path.join(SCREENSHOTS, `${name}.png`), fullPage: true })
}

/** The text of the first match, once it is there (playwright-core has no web-first assertions). */
export async function textOf(locator: import('playwright-core').Locator): Promise<string> {
  await locator.first().waitFor({ timeout: 10_000 })
  return (await locator.first().textContent())?.trim() ?? ''
}

/**
 * Signs in on the dashboard's sign-in form, which `page` is showing; with `totpSecret`, enters the
 * authenticator's code on the second step too.
 */
export async function signIn(page: Page, email: string, password: string, totpSecret?: string): Promise<void> {
  await page.getByLabel('E-mail address').fill(email)
  await page.getByLabel('Password').fill(password)
  await page.getByRole('button', { name: 'Sign in', exact: true }).click()
  if (totpSecret === undefined) return
  await page.getByRole('heading', { name: 'Enter your code' }).waitFor({ timeout: 10_000 })
  await page.getByLabel('Code').fill(await authenticatorCode(totpSecret))
  await page.getByRole('button', { name: 'Continue' }).click()
}
