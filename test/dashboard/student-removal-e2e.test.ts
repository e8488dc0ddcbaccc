/// <reference lib="dom" />
/**
 * Unlinking and erasing students in a real browser with JavaScript off, against a real server
 * process: the operator opens the demo organisation's students, unlinks one after its
 * confirmation page, then finds the demo student by id and erases it by typing the id. Each page
 * is checked with axe-core and photographed; the partner's feed shows both notices; and nothing
 * the server printed from the erasure on names the child.
 */
import type { BrowserContext, Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { CATALOG_DIR, tempDir } from '../helper.js'
import type { RunningServer } from '../server/process.js'
import { hasChromium, screenshot, textOf } from '../support/browser.js'
import { checkPage, closeDemo, type DemoOperator, signInDemoOperator } from '../support/demo-dashboard.js'

describe.skipIf(!hasChromium())('unlinking and erasing students in a browser', () => {
  let demo: DemoOperator
  let server: RunningServer
  let operator: Page
  let operatorContext: BrowserContext
  let studentKey: string
  let demoStudent: string
  let demoName: string
  const url = (p: string) => `${server.baseUrl}${p}`
  /** Photographs the operator's page, and checks the page at its address with axe in the JavaScript-on session. */
  const check = (name: string) => checkPage(demo.checker, operator, operatorContext, name)

  beforeAll(async () => {
    demo = await signInDemoOperator({ DATABASE_URL: `sqlite:${tempDir()}/erase.db`, CATALOG_DIR })
    ;({ server, operator, operatorContext } = demo)
    const out = server.output()
    const student = /Demo student: (\w+) \(\w+\), id ([0-9a-f-]{36})/.exec(out)!
    demoName = student[1]!
    demoStudent = student[2]!
    studentKey = /Demo student key[^\n]*\n\s+(\S+)/.exec(out)![1]!
  }, 60_000)

  afterAll(() => closeDemo(demo))

  it('unlinks a student from an organisation after a confirmation page', async () => {
    await operator.getByRole('link', { name: 'Organisations' }).click()
    await operator.getByRole('link', { name: /Demo Partner/ }).click()
    await operator.getByRole('link', { name: /Students linked to/ }).click()
    expect(await textOf(operator.getByRole('heading', { level: 1 }))).toMatch(/^Students of Demo Partner/)
    await check('20-organisation-students')
    // The second row's student: the first is the one erased below, and may sort anywhere.
    const row = operator.locator('tbody tr', { hasNotText: demoStudent }).first()
    const unlinked = (await textOf(row.locator('code'))).trim()
    await row.getByRole('link', { name: /^Unlink/ }).click()
    expect(await textOf(operator.getByRole('heading', { level: 1 }))).toMatch(/^Unlink a student from Demo Partner/)
    await check('21-unlink-confirm')
    await operator.getByRole('button', { name: 'Unlink the student' }).click()
    expect(await textOf(operator.getByRole('status'))).toContain(`Student ${unlinked} was unlinked`)
    expect(await operator.locator('tbody').textContent()).not.toContain(unlinked)

    const feed = await fetch(url('/api/v1/progress/changes?from=beginning&limit=500'), {
      headers: { authorization: `Bearer ${studentKey}` },
    })
    const { changes } = (await feed.json()) as { changes: { type: string; profileId: string }[] }
    expect(changes.filter((c) => c.type === 'student_unlinked')).toEqual([
      { sequence: expect.any(Number), type: 'student_unlinked', profileId: unlinked, changedAt: expect.any(String) },
    ])
  })

  it('erases a student found by id once the id is typed, and logs nothing that names the child', async () => {
    const printedBefore = server.output().length
    await operator.getByRole('link', { name: 'Students', exact: true }).click()
    expect(await textOf(operator.getByRole('heading', { level: 1 }))).toBe('Erase a student')
    await check('22-erase-find')
    await operator.getByLabel('Student id').fill(demoStudent)
    await operator.getByRole('button', { name: 'Find' }).click()
    expect(await textOf(operator.locator('main'))).toContain('Demo Partner')
    await check('23-erase-confirm')
    await operator.getByRole('button', { name: 'Erase the student' }).click()
    expect(await textOf(operator.getByRole('heading', { level: 1 }))).toBe('Erase a student')
    expect(await textOf(operator.locator('.field-error'))).toContain('Type the student id exactly as shown')
    await screenshot(operator, '24-erase-refused')
    await operator.getByLabel('Type the student id to confirm').fill(demoStudent)
    await operator.getByRole('button', { name: 'Erase the student' }).click()
    expect(await textOf(operator.getByRole('status'))).toContain(`Student ${demoStudent} was erased`)
    await check('25-erased')

    const headers = { authorization: `Bearer ${studentKey}` }
    expect((await fetch(url(`/api/v1/students/${demoStudent}/progress`), { headers })).status).toBe(404)
    const { changes } = (await (
      await fetch(url('/api/v1/progress/changes?from=beginning&limit=500'), { headers })
    ).json()) as { changes: { type: string; profileId: string; displayName?: string }[] }
    expect(changes.filter((c) => c.profileId === demoStudent)).toEqual([
      { sequence: expect.any(Number), type: 'student_deleted', profileId: demoStudent, changedAt: expect.any(String) },
    ])
    const printed = server.output().slice(printedBefore)
    expect(printed).toContain('/dashboard/operator/students/erase')
    expect(printed).not.toContain(demoName)
  })
})
