/// <reference lib="dom" />
/**
 * Schools and shares in a real browser with JavaScript off, against a real server process: the
 * operator adds a school, shares it and a pasted list with the demo organisation, reads who is
 * shared and why, and ends the demo's own share after its confirmation page; the partner's feed
 * then holds a student_unlinked notice for each student no other share keeps. Each page is
 * checked with axe-core and photographed.
 */
import type { BrowserContext, Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { CATALOG_DIR, tempDir } from '../helper.js'
import type { RunningServer } from '../server/process.js'
import { hasChromium, textOf } from '../support/browser.js'
import { checkPage, closeDemo, type DemoOperator, signInDemoOperator } from '../support/demo-dashboard.js'

describe.skipIf(!hasChromium())('schools and shares in a browser', () => {
  let demo: DemoOperator
  let server: RunningServer
  let operator: Page
  let operatorContext: BrowserContext
  let studentKey: string
  let demoStudent: string
  const url = (p: string) => `${server.baseUrl}${p}`
  const check = (name: string) => checkPage(demo.checker, operator, operatorContext, name)

  /** The text of the first match, its line breaks and runs of spaces read as one space. */
  const said = async (locator: Parameters<typeof textOf>[0]) => (await textOf(locator)).replace(/\s+/g, ' ')

  beforeAll(async () => {
    demo = await signInDemoOperator({ DATABASE_URL: `sqlite:${tempDir()}/shares.db`, CATALOG_DIR })
    ;({ server, operator, operatorContext } = demo)
    const out = server.output()
    demoStudent = /Demo student: \w+ \(\w+\), id ([0-9a-f-]{36})/.exec(out)![1]!
    studentKey = /Demo student key[^\n]*\n\s+(\S+)/.exec(out)![1]!
  }, 60_000)

  afterAll(() => closeDemo(demo))

  it('adds a school by hand', async () => {
    await operator.getByRole('link', { name: 'Schools', exact: true }).click()
    expect(await textOf(operator.getByRole('heading', { level: 1 }))).toBe('Schools')
    await operator.getByRole('button', { name: 'Add the school' }).click()
    expect(await textOf(operator.locator('.error-summary'))).toContain('The name is required.')
    await check('30-schools-refused')
    await operator.getByLabel('Name').fill('Hillside Primary')
    await operator.getByLabel('Identifier (optional)').fill('HP-01')
    await operator.getByRole('button', { name: 'Add the school' }).click()
    expect(await said(operator.getByRole('status'))).toContain('School Hillside Primary was added')
    expect(await textOf(operator.locator('tbody'))).toContain('Hillside Primary')
    await check('31-schools')
  })

  it('shares the school and a list with the demo organisation, and shows who is shared and why', async () => {
    await operator.getByRole('link', { name: 'Organisations' }).click()
    await operator.getByRole('link', { name: /Demo Partner/ }).click()
    const shares = operator.locator('#shares ~ .table-wrap').first()
    expect(await textOf(shares)).toContain('Demo students (demo data)')
    await operator.getByLabel('School', { exact: true }).selectOption({ label: 'Hillside Primary (HP-01), 0 students' })
    await operator.getByRole('button', { name: 'Share the school' }).click()
    expect(await said(operator.getByRole('status'))).toContain('School share “Hillside Primary” made')

    await operator.getByLabel('Students', { exact: true }).fill(`${demoStudent}\nnot-a-student`)
    await operator.getByLabel('Label').fill('Reading club')
    await operator.getByRole('button', { name: 'Share the list' }).click()
    expect(await textOf(operator.locator('.error-summary'))).toContain('line 2: no student has the id or external id')
    await check('32-share-list-refused')
    await operator.getByLabel('Students', { exact: true }).fill(demoStudent)
    await operator.getByRole('button', { name: 'Share the list' }).click()
    expect(await said(operator.getByRole('status'))).toContain('List share “Reading club” made: it holds 1 student')
    await check('33-organisation-shares')

    await operator.getByRole('link', { name: 'Shared students and why' }).click()
    expect(await textOf(operator.getByRole('heading', { level: 1 }))).toMatch(/^Students shared with Demo Partner/)
    const row = operator.locator('tbody tr', { hasText: demoStudent })
    expect(await textOf(row)).toContain('List: Demo students (demo data)')
    expect(await textOf(row)).toContain('List: Reading club')
    await check('34-shared-students')
  })

  it('ends the demo share after a confirmation page; the partner is told about each student unlinked', async () => {
    await operator.getByRole('link', { name: /Back to Demo Partner/ }).click()
    await operator.getByRole('link', { name: /End share Demo students/ }).click()
    expect(await textOf(operator.getByRole('heading', { level: 1 }))).toMatch(/^End a share with Demo Partner/)
    const main = await textOf(operator.locator('main'))
    const [, held, unlinking] = /It holds (\d+) students\.[\s\S]*?(\d+) of them no other share holds/.exec(main)!
    expect(Number(unlinking)).toBe(Number(held) - 1)
    await check('35-end-share-confirm')
    await operator.getByRole('button', { name: 'End the share' }).click()
    expect(await said(operator.getByRole('status'))).toContain('The share “Demo students (demo data)” ended.')
    await check('36-share-ended')

    const feed = await fetch(url('/api/v1/progress/changes?from=beginning&limit=500'), {
      headers: { authorization: `Bearer ${studentKey}` },
    })
    const { changes } = (await feed.json()) as { changes: { type: string; profileId: string }[] }
    const unlinked = changes.filter((c) => c.type === 'student_unlinked').map((c) => c.profileId)
    expect(unlinked).toHaveLength(Number(unlinking))
    expect(unlinked).not.toContain(demoStudent)
    // The student the reading club holds is still reachable.
    const kept = await fetch(url(`/api/v1/students/${demoStudent}/progress`), {
      headers: { authorization: `Bearer ${studentKey}` },
    })
    expect(kept.status).toBe(200)
  })
})
