/**
 * Notices, on each engine: who gets an organisation's notice (by role, less those who turned its
 * topic off), the time-based ones at their thresholds (the clock is a number given to each run),
 * once only when two runs race, nothing of keys or agreement expiry for a suspended organisation
 * (its deletion deadline still told), and a sign-in from a new device told, the first one not.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { attestDeletion } from '../../src/cases/deletion-attestation.js'
import { recordAgreement, recordAgreementAudited } from '../../src/cases/agreement-record.js'
import { decideApplication, submitApplication } from '../../src/cases/applications.js'
import { deadlineThreshold, sendDueNotices } from '../../src/cases/due-notices.js'
import {
  queueOrganisationNotice,
  recordSignInDevice,
  setNoticePreferences,
  noticePreferences,
} from '../../src/cases/notices.js'
import { keyExpiringMail } from '../../src/cases/notice-mail.js'
import type { MemberRole } from '../../src/domain/member-roles.js'
import { createApiKey, createOrganisation, setOrganisationStatus } from '../../src/storage/access-repository.js'
import { createAccount, markEmailVerified } from '../../src/storage/account-repository.js'
import { openStorage, type Storage } from '../../src/storage/connection.js'
import { insertMembership } from '../../src/storage/membership-repository.js'
import { createTestStorage, freshDatabaseUrl } from '../helper.js'

const T0 = Date.parse('2026-03-02T09:00:00.000Z')
const DAY = 86_400_000
const CONTEXT = { publicUrl: 'https://curriculum.example.org' }

describe('notices', () => {
  let url: string
  let storage: Storage
  let organisationId: string
  const ids: Record<string, string> = {}

  beforeEach(async () => {
    url = freshDatabaseUrl()
    storage = await createTestStorage({ url, catalog: false })
    organisationId = (await createOrganisation(storage.db, 'Acme Learning', T0)).id
    const members: [string, MemberRole][] = [
      ['owner@acme.test', 'owner'],
      ['dev@acme.test', 'developer'],
      ['viewer@acme.test', 'viewer'],
    ]
    for (const [email, role] of members) {
      const account = await createAccount(storage.db, { email, passwordHash: 'x', role: 'partner' }, T0)
      ids[email] = account.id
      await insertMembership(storage.db, { organisationId, accountId: account.id, role }, T0)
    }
  })
  afterEach(async () => storage.close())

  const mails = async () =>
    (await storage.db.selectFrom('mail_outbox').select(['kind', 'recipient']).orderBy('id').execute()).map(
      (row) => `${row.kind} ${row.recipient}`,
    )

  it('reaches the roles of the topic, less those who turned it off; all topics are on by default', async () => {
    expect(Object.values(await noticePreferences(storage.db, ids['dev@acme.test']!))).toEqual([true, true, true, true])
    const compose = (to: string) =>
      keyExpiringMail(to, { organisation: 'Acme', name: 'k', prefix: 'cur_live_ab', expiresAt: isoDay(T0) }, '')
    await queueOrganisationNotice(storage.db, organisationId, 'keys', compose, T0)
    expect(await mails()).toEqual(['key-expiring dev@acme.test', 'key-expiring owner@acme.test'])
    await setNoticePreferences(storage.db, ids['dev@acme.test']!, ['agreements', 'webhooks', 'deletion'], T0)
    expect((await noticePreferences(storage.db, ids['dev@acme.test']!)).keys).toBe(false)
    await queueOrganisationNotice(storage.db, organisationId, 'keys', compose, T0)
    expect((await mails()).slice(2)).toEqual(['key-expiring owner@acme.test'])
  })

  it('tells of a live key expiring within 7 days once, and of none after its organisation is suspended', async () => {
    await createApiKey(storage.db, { organisationId, name: 'live', scopes: [], expiresAt: T0 + 10 * DAY }, T0)
    await createApiKey(
      storage.db,
      { organisationId, name: 'test', scopes: [], expiresAt: T0 + 2 * DAY, mode: 'test' },
      T0,
    )
    expect(await sendDueNotices(storage.db, T0 + 2 * DAY, CONTEXT)).toBe(0)
    expect(await sendDueNotices(storage.db, T0 + 3 * DAY + 1, CONTEXT)).toBe(2)
    expect(await sendDueNotices(storage.db, T0 + 4 * DAY, CONTEXT)).toBe(0)
    expect(await mails()).toEqual(['key-expiring dev@acme.test', 'key-expiring owner@acme.test'])

    const other = (await createOrganisation(storage.db, 'Suspended Ltd', T0)).id
    await insertMembership(storage.db, { organisationId: other, accountId: ids['owner@acme.test']!, role: 'owner' }, T0)
    await createApiKey(storage.db, { organisationId: other, name: 'live', scopes: [], expiresAt: T0 + 5 * DAY }, T0)
    await setOrganisationStatus(storage.db, other, 'suspended')
    expect(await sendDueNotices(storage.db, T0 + 4 * DAY, CONTEXT)).toBe(0)
  })

  it('queues one mail per recipient when two instances run the task at the same moment', async () => {
    await createApiKey(storage.db, { organisationId, name: 'live', scopes: [], expiresAt: T0 + 5 * DAY }, T0)
    // A second instance: its own connection (pool) to the same database.
    const other = openStorage(url)
    try {
      // Both read what is due before either claims it, so the claim alone keeps the notice single.
      const counts = await Promise.all([
        sendDueNotices(storage.db, T0, CONTEXT),
        sendDueNotices(other.db, T0, CONTEXT),
        sendDueNotices(storage.db, T0, CONTEXT),
        sendDueNotices(other.db, T0, CONTEXT),
      ])
      expect(counts.reduce((a, b) => a + b, 0)).toBe(2)
    } finally {
      await other.close()
    }
    expect(await mails()).toEqual(['key-expiring dev@acme.test', 'key-expiring owner@acme.test'])
    expect(await storage.db.selectFrom('notices_sent').selectAll().execute()).toHaveLength(1)
  })

  it('tells owners of an agreement recorded and of its end within 30 days, unless another follows', async () => {
    const agreement = { organisationId, signedAt: T0 - DAY, expiresAt: T0 + 40 * DAY, documentRef: 'DSA-1' }
    await recordAgreement(storage.db, agreement, T0, CONTEXT)
    expect(await mails()).toEqual(['agreement-recorded owner@acme.test'])
    expect(await sendDueNotices(storage.db, T0 + 9 * DAY, CONTEXT)).toBe(0)
    expect(await sendDueNotices(storage.db, T0 + 11 * DAY, CONTEXT)).toBe(1)
    expect((await mails()).at(-1)).toBe('agreement-ending owner@acme.test')

    const later = { organisationId, signedAt: T0, expiresAt: T0 + 50 * DAY, documentRef: 'DSA-2' }
    await recordAgreement(storage.db, later, T0 + 12 * DAY)
    const next = { organisationId, signedAt: T0 + 40 * DAY, expiresAt: null, documentRef: 'DSA-3' }
    await recordAgreement(storage.db, next, T0 + 12 * DAY)
    expect(await sendDueNotices(storage.db, T0 + 25 * DAY, CONTEXT)).toBe(0)
  })

  it("announces the operator's recorded agreement in the held-mail log after its commit", async () => {
    const announced: { id: number; kind: string }[] = []
    const held = (mail: { id: number; kind: string }) => announced.push({ id: mail.id, kind: mail.kind })
    const organisation = { id: organisationId, name: 'Acme Learning' }
    const agreement = { signedAt: T0, expiresAt: null, documentRef: 'DSA-9' }
    await recordAgreementAudited(storage.db, organisation, agreement, { actor: 'account:op@x.test' }, T0, {
      ...CONTEXT,
      held,
    })
    const rows = await storage.db.selectFrom('mail_outbox').select(['id', 'kind']).execute()
    expect(announced).toEqual(rows)
    expect(rows.map((row) => row.kind)).toEqual(['agreement-recorded'])
  })

  it('tells owners of a deletion deadline 14 and 3 days ahead and once passed, not once attested', async () => {
    const ended = { organisationId, signedAt: T0 - 60 * DAY, expiresAt: T0, documentRef: 'DSA-1', dispositionDays: 30 }
    await recordAgreement(storage.db, ended, T0 - 60 * DAY)
    await setOrganisationStatus(storage.db, organisationId, 'suspended')
    const due = T0 + 30 * DAY
    expect(await sendDueNotices(storage.db, due - 15 * DAY, CONTEXT)).toBe(0)
    expect(await sendDueNotices(storage.db, due - 14 * DAY, CONTEXT)).toBe(1)
    expect(await sendDueNotices(storage.db, due - 4 * DAY, CONTEXT)).toBe(0)
    expect(await sendDueNotices(storage.db, due - 3 * DAY, CONTEXT)).toBe(1)
    expect(await sendDueNotices(storage.db, due, CONTEXT)).toBe(1)
    expect(await sendDueNotices(storage.db, due + DAY, CONTEXT)).toBe(0)
    const sent = await storage.db.selectFrom('notices_sent').select('threshold').orderBy('sent_at').execute()
    expect(sent.map((row) => row.threshold)).toEqual(['14d', '3d', 'passed'])
    expect(await mails()).toEqual(Array(3).fill('deletion-deadline owner@acme.test'))

    const second = { organisationId, signedAt: T0 - 40 * DAY, expiresAt: T0 + 40 * DAY, documentRef: 'DSA-2' }
    await recordAgreement(storage.db, { ...second, dispositionDays: 30 }, T0)
    await attestDeletion(storage.db, { organisationId, by: { accountId: ids['owner@acme.test']! } }, T0 + 41 * DAY)
    expect(await sendDueNotices(storage.db, T0 + 60 * DAY, CONTEXT)).toBe(0)
  })

  it('takes the most urgent deadline threshold, and none for a deadline long passed', () => {
    expect(deadlineThreshold(T0 + 20 * DAY, T0)).toBeUndefined()
    expect(deadlineThreshold(T0 + 14 * DAY, T0)).toBe('14d')
    expect(deadlineThreshold(T0 + 2 * DAY, T0)).toBe('3d')
    expect(deadlineThreshold(T0, T0)).toBe('passed')
    expect(deadlineThreshold(T0 - 31 * DAY, T0)).toBeUndefined()
  })

  it('tells the applicant of the decision, with the granted scopes or the reason', async () => {
    const applicant = await createAccount(
      storage.db,
      { email: 'apply@new.test', passwordHash: 'x', role: 'partner' },
      T0,
    )
    await markEmailVerified(storage.db, applicant.id, 'apply@new.test', T0)
    const application = {
      accountId: applicant.id,
      organisationName: 'New Co',
      website: 'https://new.test',
      contactName: 'A',
      contactEmail: 'apply@new.test',
      intendedUse: 'tutoring',
      requestedScopes: ['students:read' as const],
    }
    const first = await submitApplication(storage.db, application, T0)
    await decideApplication(storage.db, first.id, { event: 'reject', reason: 'No agreement yet.' }, 'op', T0, CONTEXT)
    const second = await submitApplication(storage.db, application, T0 + 1)
    await decideApplication(storage.db, second.id, { event: 'approve', grantedScopes: [] }, 'op', T0 + 2, CONTEXT)
    const rows = await storage.db.selectFrom('mail_outbox').selectAll().orderBy('id').execute()
    expect(rows.map((row) => `${row.kind} ${row.recipient}`)).toEqual([
      'application-rejected apply@new.test',
      'application-approved apply@new.test',
    ])
    expect(rows[0]!.text_body).toContain('No agreement yet.')
  })

  it('tells of a sign-in from a new device, but not of the first sign-in or a known device', async () => {
    const account = { id: ids['viewer@acme.test']!, email: 'viewer@acme.test' }
    const origin = { address: '203.0.113.9', userAgent: 'Mozilla/5.0 (X11; Linux x86_64) Firefox/140.0' }
    expect(await recordSignInDevice(storage.db, account, 'device-a', origin, CONTEXT, T0)).toEqual({ notified: false })
    expect(await recordSignInDevice(storage.db, account, 'device-a', origin, CONTEXT, T0 + 1)).toEqual({
      notified: false,
    })
    expect(await recordSignInDevice(storage.db, account, 'device-b', origin, CONTEXT, T0 + 2)).toEqual({
      notified: true,
    })
    expect(await mails()).toEqual(['new-device viewer@acme.test'])
    const stored = await storage.db.selectFrom('known_devices').select('device_hash').execute()
    expect(stored.map((row) => row.device_hash)).not.toContain('device-a')
  })
})

function isoDay(at: number): string {
  return new Date(at).toISOString()
}
