/// <reference lib="dom" />
/**
 * Importing a roster in a real browser with JavaScript off, against a real server process: the
 * operator opens Roster import, uploads a OneRoster .zip, reads the preview, cancels, uploads
 * again and confirms; a bad export shows its problems. Each page is checked with axe-core and
 * photographed, and nothing the server printed names a child's family name.
 */
import fs from 'node:fs'
import path from 'node:path'
import type { BrowserContext, Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { CATALOG_DIR, tempDir } from '../helper.js'
import { manifest, ORGS_HEADER, ROLES_HEADER, table, USERS_12_HEADER, zipBytes } from '../roster/roster-export.js'
import type { RunningServer } from '../server/process.js'
import { hasChromium, screenshot, textOf } from '../support/browser.js'
import {
  checkPage,
  closeDemo,
  type DemoOperator,
  expectAccessible,
  signInDemoOperator,
} from '../support/demo-dashboard.js'

const FAMILY = 'Familyroster'

function exportZip(folder: string, name: string, roles: Record<string, string>[]): string {
  const data = zipBytes(
    Object.entries({
      'manifest.csv': manifest('1.2', { orgs: 'bulk', users: 'bulk', roles: 'bulk' }),
      'orgs.csv': table(ORGS_HEADER, [
        { sourcedId: 'sch-north', name: 'North Elementary', type: 'school', identifier: 'NE-01' },
      ]),
      'users.csv': table(USERS_12_HEADER, [
        { sourcedId: 's1', givenName: 'Ada', familyName: FAMILY, email: 'ada@mail.example.org' },
        { sourcedId: 's2', givenName: 'Ben', familyName: FAMILY, preferredGivenName: 'Benji' },
      ]),
      'roles.csv': table(ROLES_HEADER, roles),
    }).map(([entry, text]) => ({ name: entry, data: text })),
  )
  const file = path.join(folder, name)
  fs.writeFileSync(file, data)
  return file
}

describe.skipIf(!hasChromium())('importing a roster in a browser', () => {
  let demo: DemoOperator
  let server: RunningServer
  let operator: Page
  let operatorContext: BrowserContext
  let checker: Page
  let good: string
  let bad: string
  const url = (p: string) => `${server.baseUrl}${p}`
  const check = (name: string) => checkPage(checker, operator, operatorContext, name)

  beforeAll(async () => {
    const folder = tempDir()
    good = exportZip(folder, 'district.zip', [
      { sourcedId: 'r1', userSourcedId: 's1', role: 'student', roleType: 'primary', orgSourcedId: 'sch-north' },
      { sourcedId: 'r2', userSourcedId: 's2', role: 'student', roleType: 'primary', orgSourcedId: 'sch-north' },
    ])
    bad = exportZip(folder, 'broken.zip', [
      { sourcedId: 'r1', userSourcedId: 's1', role: 'student', roleType: 'primary', orgSourcedId: 'sch-east' },
    ])
    demo = await signInDemoOperator({
      DATABASE_URL: `sqlite:${folder}/roster.db`,
      CATALOG_DIR,
      ROSTER_UPLOAD_DIR: path.join(folder, 'uploads'),
    })
    ;({ server, operator, operatorContext, checker } = demo)
    checker.setDefaultTimeout(10_000)
  }, 60_000)

  afterAll(() => closeDemo(demo))

  const upload = async (page: Page, file: string) => {
    await page.goto(url('/dashboard/operator/roster'))
    await page.getByLabel('Tier of new students').selectOption('builder')
    await page.getByLabel(/OneRoster export/).setInputFiles(file)
    await page.getByRole('button', { name: 'Upload and preview' }).click()
  }

  it('previews an upload, cancels it, then imports it on confirmation', async () => {
    await operator.getByRole('link', { name: 'Roster import' }).click()
    expect(await textOf(operator.getByRole('heading', { level: 1 }))).toBe('Import a roster')
    await check('40-roster-upload')

    await upload(operator, good)
    expect(await textOf(operator.getByRole('heading', { level: 1 }))).toBe('Preview of the roster import')
    const main = await textOf(operator.locator('main'))
    expect(main).toMatch(/New students\s*2/)
    expect(main).toContain('new students get the tier builder')
    await check('41-roster-preview')
    await operator.getByRole('button', { name: 'Cancel' }).click()
    expect(await textOf(operator.getByRole('status'))).toContain('The upload was cancelled')

    await upload(operator, good)
    await operator.getByRole('button', { name: 'Confirm the import' }).click()
    expect(await textOf(operator.getByRole('heading', { level: 1 }))).toBe('Roster imported')
    expect(await textOf(operator.locator('main'))).toMatch(/New students\s*2/)
    await check('42-roster-imported')
  })

  it('lists the problems of a bad export, and prints no family name', async () => {
    await upload(operator, bad)
    expect(await textOf(operator.getByRole('heading', { level: 1 }))).toBe('The roster has problems')
    expect(await textOf(operator.locator('main'))).toContain(
      'roles.csv:2: orgSourcedId: names the org "sch-east", which orgs.csv does not hold',
    )
    await screenshot(operator, '43-roster-problems')
    // The problems page answers a POST: the session with JavaScript on uploads for itself.
    await checker.context().addCookies(await operatorContext.cookies())
    await upload(checker, bad)
    await expectAccessible(checker, '43-roster-problems')
    expect(server.output()).not.toContain(FAMILY)
    expect(server.output()).not.toContain('mail.example.org')
  })
})
