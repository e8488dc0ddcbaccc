/**
 * The deprecation of an operation, told by the hourly notice task on each engine: to the owners of
 * every active partner organisation whose keys called the API in the last 30 days, whatever they
 * chose, once per organisation and sunset (a later sunset is told again), to an organisation that
 * starts calling later, and to nobody once the sunset has passed or when nothing is deprecated.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { DEPRECATION_AUDIENCE_MS, sendDueNotices } from '../../src/cases/due-notices.js'
import { setNoticePreferences } from '../../src/cases/notices.js'
import { isoAt } from '../../src/clock.js'
import { deprecation } from '../../src/domain/deprecation.js'
import type { MemberRole } from '../../src/domain/member-roles.js'
import { createApiKey, createOrganisation, setOrganisationStatus } from '../../src/storage/access-repository.js'
import { createAccount } from '../../src/storage/account-repository.js'
import type { Storage } from '../../src/storage/connection.js'
import { insertMembership } from '../../src/storage/membership-repository.js'
import { createTestStorage, freshDatabaseUrl } from '../helper.js'

const T0 = Date.parse('2027-01-04T09:00:00.000Z')
const DAY = 86_400_000
const TIERS = deprecation({ deprecatedAt: '2027-01-04', sunsetAt: '2027-07-05' })
const context = (deprecations: Record<string, typeof TIERS>) => ({
  publicUrl: 'https://curriculum.example.org',
  deprecations,
})

describe('deprecation notices', () => {
  let storage: Storage

  /** An organisation with members, and a key last used `usedAgo` before T0 (never, without). */
  const organisation = async (name: string, members: [string, MemberRole][], usedAgo?: number) => {
    const { id } = await createOrganisation(storage.db, name, T0 - 90 * DAY)
    for (const [email, role] of members) {
      const account = await createAccount(storage.db, { email, passwordHash: 'x', role: 'partner' }, T0 - 90 * DAY)
      await insertMembership(storage.db, { organisationId: id, accountId: account.id, role }, T0 - 90 * DAY)
    }
    const key = await createApiKey(
      storage.db,
      { organisationId: id, name: 'k', scopes: [], expiresAt: null, mode: 'test' },
      T0,
    )
    if (usedAgo !== undefined) await used(key.row.id, T0 - usedAgo)
    return id
  }
  const used = (keyId: string, at: number) =>
    storage.db
      .updateTable('api_keys')
      .set({ last_used_at: isoAt(at) })
      .where('id', '=', keyId)
      .execute()
  const mails = async () =>
    (await storage.db.selectFrom('mail_outbox').select(['kind', 'recipient']).orderBy('id').execute()).map(
      (row) => `${row.kind} ${row.recipient}`,
    )

  beforeEach(async () => {
    storage = await createTestStorage({ url: freshDatabaseUrl(), catalog: false })
  })
  afterEach(async () => storage.close())

  it('tells the owners of each organisation calling the API, once, whatever they chose', async () => {
    await organisation('Acme Learning', [
      ['owner@acme.test', 'owner'],
      ['dev@acme.test', 'developer'],
    ])
    const acme = (await storage.db.selectFrom('api_keys').select('id').executeTakeFirstOrThrow()).id
    await used(acme, T0 - DAY)
    const owner = await storage.db.selectFrom('accounts').select('id').where('email', '=', 'owner@acme.test')
    // An owner who turned every topic off is told all the same.
    await setNoticePreferences(storage.db, (await owner.executeTakeFirstOrThrow()).id, [], T0)
    await organisation('Quiet Ltd', [['owner@quiet.test', 'owner']], DEPRECATION_AUDIENCE_MS + DAY)
    await organisation('Never Ltd', [['owner@never.test', 'owner']])
    const suspended = await organisation('Paused Ltd', [['owner@paused.test', 'owner']], DAY)
    await setOrganisationStatus(storage.db, suspended, 'suspended')

    const deprecations = context({ 'GET /api/v1/tiers': TIERS })
    expect(await sendDueNotices(storage.db, T0, deprecations)).toBe(1)
    expect(await sendDueNotices(storage.db, T0 + DAY, deprecations)).toBe(0)
    expect(await mails()).toEqual(['api-deprecation owner@acme.test'])
    const mail = await storage.db.selectFrom('mail_outbox').selectAll().executeTakeFirstOrThrow()
    expect(mail.subject).toBe('Curriculum API: GET /api/v1/tiers may be removed after 2027-07-05')
    expect(mail.text_body).toContain(
      'The operation GET /api/v1/tiers of the Curriculum API is deprecated from 2027-01-04',
    )
    expect(mail.text_body).toContain('The keys of Acme Learning called the API in the last 30 days')
    expect(mail.text_body).toContain('https://curriculum.example.org/docs/changelog')

    // Another operation, and the same one with a later sunset, are told again.
    const later = deprecation({ deprecatedAt: '2027-01-04', sunsetAt: '2027-10-04' })
    const more = context({ 'GET /api/v1/tiers': later, 'GET /api/v1/lessons': TIERS })
    expect(await sendDueNotices(storage.db, T0 + 2 * DAY, more)).toBe(2)
  })

  it('tells an organisation that starts calling later, until the sunset, and nobody when nothing is deprecated', async () => {
    await organisation('Acme Learning', [['owner@acme.test', 'owner']])
    const key = (await storage.db.selectFrom('api_keys').select('id').executeTakeFirstOrThrow()).id
    expect(await sendDueNotices(storage.db, T0, context({ 'GET /api/v1/tiers': TIERS }))).toBe(0)
    await used(key, T0 + DAY)
    expect(await sendDueNotices(storage.db, T0 + DAY, context({}))).toBe(0)
    const sunset = Date.parse(TIERS.sunsetAt)
    expect(await sendDueNotices(storage.db, sunset, context({ 'GET /api/v1/tiers': TIERS }))).toBe(0)
    expect(await sendDueNotices(storage.db, T0 + 2 * DAY, context({ 'GET /api/v1/tiers': TIERS }))).toBe(1)
    expect(await mails()).toEqual(['api-deprecation owner@acme.test'])
  })
})
