/// <reference lib="dom" />
/**
 * The end of an agreement in a real browser with JavaScript off, against a real server process
 * started on a database where a partner's agreement ended 40 days ago (a 30-day period): the
 * server ends the links at start; the partner sees the notice, downloads the ids, attests after
 * the confirmation page; the operator sees the attestation on Ended agreements and downloads the
 * certificate, which verifies against the key the server publishes. Each page is checked with
 * axe-core and photographed.
 */
import { createPublicKey, verify } from 'node:crypto'
import fs from 'node:fs'
import type { Browser, BrowserContext, Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { canonicalJson } from '../../src/domain/canonical-json.js'
import { createOperatorWithAuthenticator } from './dashboard-client.js'
import { hashPassword } from '../../src/domain/passwords.js'
import { createOrganisation } from '../../src/storage/access-repository.js'
import { endAgreements } from '../../src/cases/agreement-end.js'
import { recordAgreement } from '../../src/cases/agreement-record.js'
import { createAccount } from '../../src/storage/account-repository.js'
import { linkStudents, upsertStudents } from '../../src/storage/student-import-repository.js'
import { CATALOG_DIR, createTestStorage, tempDir } from '../helper.js'
import { type RunningServer, startServer } from '../server/process.js'
import { hasChromium, launchBrowser, signIn, textOf } from '../support/browser.js'
import { checkPage, VIEWPORT } from '../support/demo-dashboard.js'
import { makeOwner } from './dashboard-client.js'

const DAY = 86_400_000
const PARTNER = { email: 'privacy@orchard.example', password: 'a long and memorable phrase' }
const OPERATOR = { email: 'ops@district.example', password: 'operator password 2026' }
let operatorTotp = ''
const STUDENT_IDS = [1, 2, 3, 4].map((n) => `00000000-0000-4000-8000-00000000000${n}`)

describe.skipIf(!hasChromium())('the end of an agreement in a browser', () => {
  let server: RunningServer
  let browser: Browser
  let checker: Page
  const url = (p: string) => `${server.baseUrl}${p}`

  /** Photographs the page, and checks it at its address with axe in a JavaScript-on session of the same cookies. */
  const check = (page: Page, context: BrowserContext, name: string) => checkPage(checker, page, context, name)

  async function signedInPage(
    context: BrowserContext,
    who: { email: string; password: string; totpSecret?: string },
  ): Promise<Page> {
    const page = await context.newPage()
    page.setDefaultTimeout(10_000)
    await page.goto(url('/dashboard/login'))
    await signIn(page, who.email, who.password, who.totpSecret)
    return page
  }

  beforeAll(async () => {
    const databaseUrl = `sqlite:${tempDir()}/end.db`
    const now = Date.now()
    const storage = await createTestStorage({ url: databaseUrl })
    try {
      const { db } = storage
      const orchard = await createOrganisation(db, 'Orchard Reading', now - 200 * DAY)
      await recordAgreement(
        db,
        {
          organisationId: orchard.id,
          signedAt: now - 200 * DAY,
          expiresAt: null,
          documentRef: 'DSA-ORCHARD-1',
          purpose: 'Reading practice',
        },
        now - 200 * DAY,
      )
      await upsertStudents(
        db,
        STUDENT_IDS.map((id) => ({ id, firstName: 'Robin', tier: 'explorer' as const })),
        now - 100 * DAY,
      )
      await linkStudents(
        db,
        STUDENT_IDS.map((studentId) => ({ studentId, organisationId: orchard.id })),
        now - 100 * DAY,
      )
      await endAgreements(db, { organisationId: orchard.id }, now - 40 * DAY)
      await createAccount(
        db,
        { email: PARTNER.email, passwordHash: await hashPassword(PARTNER.password), role: 'partner' },
        now,
      )
      await makeOwner(db, PARTNER.email, orchard.id)
      operatorTotp = (await createOperatorWithAuthenticator(db, { now: () => now }, OPERATOR)).secret
    } finally {
      await storage.close()
    }
    server = await startServer({ DATABASE_URL: databaseUrl, CATALOG_DIR, SEED_DEMO: 'false' })
    // At start the server ends the links whose disposition period is over.
    await server.waitForOutput((out) => out.includes('agreement ended: links ended for deletion'))
    browser = await launchBrowser()
    checker = await (await browser.newContext({ viewport: VIEWPORT })).newPage()
  }, 60_000)

  afterAll(async () => {
    await browser?.close()
    await server?.stop()
  })

  it('the partner sees what to delete, downloads the ids and attests after confirming', async () => {
    const context = await browser.newContext({ viewport: VIEWPORT, javaScriptEnabled: false })
    const partner = await signedInPage(context, PARTNER)
    await partner.goto(url('/dashboard/partner'))
    expect(await textOf(partner.locator('main'))).toMatch(/Agreement DSA-ORCHARD-1 ended on .*: delete\s+what your/)
    await check(partner, context, '30-partner-deletion-notice')
    await partner.getByRole('link', { name: 'Data to delete' }).click()
    expect(await textOf(partner.getByRole('heading', { level: 1 }))).toBe('Data to delete')
    expect(await textOf(partner.locator('main'))).toContain('4 students')
    await check(partner, context, '31-partner-data-to-delete')

    const [download] = await Promise.all([
      partner.waitForEvent('download'),
      partner.getByRole('link', { name: 'The list (CSV)' }).click(),
    ])
    const list = fs.readFileSync((await download.path())!, 'utf8')
    // The links have ended: the disposition asked for each, and no endpoint was there to be told.
    expect(list.trim().split('\r\n')).toEqual([
      '"student_id","asked_by","asked_at","webhook"',
      ...STUDENT_IDS.map((id) =>
        expect.stringMatching(new RegExp(`^"${id}","disposition","[0-9T:.Z-]+","no_endpoint"$`)),
      ),
    ])

    await partner.getByRole('link', { name: /I attest we deleted these/ }).click()
    expect(await textOf(partner.getByRole('heading', { level: 1 }))).toBe('Attest the deletion?')
    await check(partner, context, '32-partner-attest-confirm')
    await partner.getByRole('button', { name: 'I attest we deleted these' }).click()
    expect(await textOf(partner.getByRole('status'))).toContain('Your attestation for agreement DSA-ORCHARD-1')
    expect(await textOf(partner.locator('main'))).toContain(`by ${PARTNER.email} in the dashboard`)
    await check(partner, context, '33-partner-attested')
    await context.close()
  })

  it('the operator sees the attestation and downloads a certificate that verifies', async () => {
    const context = await browser.newContext({ viewport: VIEWPORT, javaScriptEnabled: false })
    const operator = await signedInPage(context, { ...OPERATOR, totpSecret: operatorTotp })
    await operator.getByRole('link', { name: 'Ended agreements' }).click()
    expect(await textOf(operator.getByRole('heading', { level: 1 }))).toBe('Ended agreements')
    const row = operator.locator('tbody tr', { hasText: 'DSA-ORCHARD-1' })
    expect(await textOf(row)).toContain(`by ${PARTNER.email} in the dashboard`)
    await check(operator, context, '34-operator-ended-agreements')

    const [download] = await Promise.all([
      operator.waitForEvent('download'),
      row.getByRole('link', { name: /Download certificate of deletion/ }).click(),
    ])
    const document = JSON.parse(fs.readFileSync((await download.path())!, 'utf8'))
    expect(document.certificate).toMatchObject({
      organisation: { name: 'Orchard Reading' },
      agreement: { reference: 'DSA-ORCHARD-1' },
      students: { count: 4, linkedAtEnd: 4 },
      attestation: { by: { kind: 'dashboard_account', email: PARTNER.email } },
    })
    const { keys } = (await (await fetch(url('/.well-known/curriculum-signing-keys'))).json()) as {
      keys: { kid: string; kty: string; crv: string; x: string }[]
    }
    const jwk = keys.find((key) => key.kid === document.signature.kid)!
    const publicKey = createPublicKey({ key: jwk, format: 'jwk' })
    const bytes = (certificate: unknown) => Buffer.from(canonicalJson(certificate as never))
    const signature = Buffer.from(document.signature.value, 'base64')
    expect(verify(null, bytes(document.certificate), publicKey, signature)).toBe(true)
    expect(document.certificate.students.list.map((s: { id: string }) => s.id)).toEqual(STUDENT_IDS)
    document.certificate.students.list.pop()
    expect(verify(null, bytes(document.certificate), publicKey, signature)).toBe(false)

    await operator.getByRole('link', { name: 'Orchard Reading' }).click()
    expect(await textOf(operator.locator('main'))).toContain('After an agreement ends')
    await check(operator, context, '35-operator-organisation-ended')
    await context.close()
  })
})
