/**
 * The page that shows a new key: reached by POST-redirect-GET, so a reload shows the key again
 * for 10 minutes (on any instance, to the creating session only) instead of re-sending the form;
 * curl commands that work as pasted, or say what to replace; and an embedded API reference
 * whose in-page links all land.
 */
import { createHash } from 'node:crypto'
import type { LightMyRequestResponse } from 'fastify'
import { beforeAll, describe, expect, it } from 'vitest'
import { buildApp } from '../../src/app.js'
import { createOrganisation } from '../../src/storage/access-repository.js'
import { recordAgreement } from '../../src/cases/agreement-record.js'
import { buildTestApp, STUDENTS, type TestContext, testConfig } from '../helper.js'
import { DashboardClient, makeOwner } from './dashboard-client.js'
import { perSuite } from '../support/built.js'

/** How long a new key stays on its page (src/dashboard/key-views.ts). */
const KEY_VIEW_MS = 10 * 60_000

const KEY = /id="new-key"[^>]*value="(cur_(?:test|live)_[\w-]+)"/

function keyOn(page: LightMyRequestResponse): string | undefined {
  return KEY.exec(page.body)?.[1]
}

/** Every `href="#x"` of the page with no element `id="x"`. */
export function danglingFragments(body: string): string[] {
  const ids = new Set([...body.matchAll(/\sid="([^"]+)"/g)].map((m) => m[1]!))
  const targets = [...body.matchAll(/\shref="#([^"]*)"/g)].map((m) => m[1]!)
  return [...new Set(targets.filter((target) => !ids.has(target)))]
}

/** Runs a curl command of the page through the app, exactly as written. */
async function runExample(t: TestContext, example: string): Promise<LightMyRequestResponse> {
  const text = example
    .replace(/&#39;/g, "'")
    .replace(/&quot;/g, '"')
    .replace(/&amp;/g, '&')
  const method = /-X (\w+)/.exec(text)?.[1] ?? 'GET'
  const authorization = /'Authorization: (Bearer [^']+)'/.exec(text)![1]!
  const body = /-d '([^']+)'/.exec(text)?.[1]
  const target = new URL(/(http:\/\/\S+)$/.exec(text.trim())![1]!)
  return t.app.inject({
    method: method as 'GET' | 'POST',
    url: target.pathname,
    headers: { authorization, ...(body ? { 'content-type': 'application/json' } : {}) },
    ...(body ? { payload: body } : {}),
  })
}

function examplesOf(page: LightMyRequestResponse): string[] {
  return [...page.body.matchAll(/<pre id="example-\d+" class="example" data-copy>([^<]+)<\/pre>/g)].map((m) => m[1]!)
}

describe('new key page', () => {
  const t = perSuite(() => buildTestApp())
  let partner: DashboardClient
  let welcome: LightMyRequestResponse

  beforeAll(async () => {
    partner = new DashboardClient(t.app, '192.0.2.60')
    welcome = await partner.signUp('keys@partner.example')
    // The partner's organisation: Acme from the fixtures (agreement in force; Ada, Ben and Dev linked).
    await makeOwner(t.storage.db, 'keys@partner.example', t.fixtures.orgs.acme)
  })

  /** The stored view behind a page address, if any. */
  async function viewRow(location: string) {
    // Rows are named by the SHA-256 of the view token, never by the token itself.
    const id = createHash('sha256').update(location.split('/').pop()!).digest('hex')
    return t.storage.db.selectFrom('key_views').selectAll().where('id', '=', id).executeTakeFirst()
  }

  async function createLiveKey(name: string, scopes: string[], client = partner): Promise<LightMyRequestResponse> {
    return client.post('/dashboard/partner/keys', { mode: 'live', 'live-name': name, scopes })
  }

  it('answers the key form with 303 to a page that shows the key again on reload, for 10 minutes', async () => {
    const created = await createLiveKey('reload test', ['students:read'])
    expect(created.statusCode).toBe(303)
    const location = created.headers.location!
    expect(location).toMatch(/^\/dashboard\/partner\/keys\/shown\/[\w-]{43}$/)
    const first = await partner.get(location)
    expect(first.statusCode).toBe(200)
    expect(first.headers['cache-control']).toBe('no-store')
    const key = keyOn(first)!
    expect(key).toMatch(/^cur_live_/)
    t.clock.advance(KEY_VIEW_MS - 1000)
    const reload = await partner.get(location)
    expect(reload.statusCode).toBe(200)
    expect(keyOn(reload)).toBe(key)
    t.clock.advance(2000)
    const late = await partner.get(location)
    expect(late.statusCode).toBe(410)
    expect(late.body).not.toContain(key)
    expect(late.body).toContain('A new key is shown once')
    expect(late.body).toContain('create another key')
    // Only the key's hash is left: the sealed copy went when the late read found it expired.
    expect(await viewRow(location)).toBeUndefined()
    // ...and so did every other view whose time was up (the welcome page's, made before).
    const expired = await t.storage.db
      .selectFrom('key_views')
      .select('id')
      .where('expires_at', '<=', new Date(t.clock.now()).toISOString())
      .execute()
    expect(expired).toEqual([])
  })

  it('keeps the welcome page and its test key on reload', async () => {
    const client = new DashboardClient(t.app, '192.0.2.64')
    expect(
      (
        await client.post('/dashboard/signup', {
          email: 'reload@partner.example',
          password: 'a long and memorable phrase',
        })
      ).statusCode,
    ).toBe(303)
    const signIn = await client.signIn('reload@partner.example')
    expect(signIn.statusCode).toBe(303)
    const first = await client.get(signIn.headers.location!)
    expect(first.statusCode).toBe(200)
    expect(first.body).toContain('<h1>Welcome</h1>')
    const key = keyOn(first)!
    expect(key).toMatch(/^cur_test_/)
    const reload = await client.get(signIn.headers.location!)
    expect(reload.body).toContain('<h1>Welcome</h1>')
    expect(keyOn(reload)).toBe(key)
  })

  it('stores the key only sealed, opened by the creating session alone, on any instance', async () => {
    const created = await createLiveKey('sealed', ['students:read'])
    const location = created.headers.location!
    const key = keyOn(await partner.get(location))!
    const row = await viewRow(location)
    expect(row!.sealed_key).not.toContain(key)
    expect(row!.sealed_key).not.toContain(key.slice(9, 20))
    expect(row!.id).not.toBe(location.split('/').pop())

    // Another session of the same account (e.g. a stolen address, or a second browser) sees nothing.
    const otherSession = new DashboardClient(t.app, '192.0.2.61')
    expect((await otherSession.signIn('keys@partner.example')).statusCode).toBe(303)
    const elsewhere = await otherSession.get(location)
    expect(elsewhere.statusCode).toBe(410)
    expect(elsewhere.body).not.toContain(key)
    // Another partner neither.
    const stranger = new DashboardClient(t.app, '192.0.2.62')
    await stranger.signUp('stranger@partner.example')
    expect((await stranger.get(location)).body).not.toContain(key)

    // A reload answered by another instance of the service (same database) shows it.
    const second = await buildApp({ config: testConfig(), storage: t.storage, clock: t.clock, logger: false })
    try {
      const viaSecond = new DashboardClient(second, '192.0.2.60')
      for (const [name, value] of partner.cookies) viaSecond.cookies.set(name, value)
      const reload = await viaSecond.get(location)
      expect(reload.statusCode).toBe(200)
      expect(keyOn(reload)).toBe(key)
    } finally {
      await second.close()
    }

    // "I have copied it" forgets the key at once.
    const hidden = await partner.post(`${location}/hide`)
    expect(hidden.statusCode).toBe(303)
    expect(hidden.headers.location).toBe('/dashboard/partner?notice=key-hidden')
    expect((await partner.get(location)).statusCode).toBe(410)
    expect(await viewRow(location)).toBeUndefined()
  })

  it('fills the live key’s commands with a student linked to the organisation, and they work as pasted', async () => {
    const page = await partner.follow(await createLiveKey('reader and writer', ['students:read', 'students:write']))
    expect(page.body).toContain('These commands work as pasted')
    expect(page.body).toContain('the student is Ada, a student linked to your organisation')
    expect(page.body).not.toContain('student-id')
    const examples = examplesOf(page)
    expect(examples).toHaveLength(3)
    expect(examples.slice(1).every((example) => example.includes(STUDENTS.ada))).toBe(true)
    const before = await t.storage.db
      .selectFrom('students')
      .select('tier')
      .where('id', '=', STUDENTS.ada)
      .executeTakeFirstOrThrow()
    for (const example of examples) expect((await runExample(t, example)).statusCode, example).toBe(200)
    // The enrolment example sets the tier the student has: running it changes nothing.
    expect(
      await t.storage.db.selectFrom('students').select('tier').where('id', '=', STUDENTS.ada).executeTakeFirstOrThrow(),
    ).toEqual(before)
  })

  it('says what to replace when the organisation has no student yet, and does not claim the commands work as pasted', async () => {
    const empty = await createOrganisation(t.storage.db, 'Empty Org', t.clock.now())
    await recordAgreement(
      t.storage.db,
      { organisationId: empty.id, signedAt: t.clock.now() - 86_400_000, expiresAt: null, documentRef: 'DSA-E' },
      t.clock.now(),
    )
    const client = new DashboardClient(t.app, '192.0.2.63')
    await client.signUp('empty@partner.example')
    await makeOwner(t.storage.db, 'empty@partner.example', empty.id)
    const page = await client.follow(await createLiveKey('no students', ['students:read'], client))
    expect(page.body).not.toContain('work as pasted')
    expect(page.body).toContain('replace <code>&lt;student-id&gt;</code> with the id of one of your students')
    const [tiers] = examplesOf(page)
    expect((await runExample(t, tiers!)).statusCode).toBe(200)
  })

  it('has no in-page link without its target on the welcome and new-key pages', async () => {
    expect(danglingFragments(welcome.body)).toEqual([])
    const page = await partner.follow(await createLiveKey('links', ['students:read']))
    expect(page.body).toContain('href="#schema-')
    expect(danglingFragments(page.body)).toEqual([])
  })
})
