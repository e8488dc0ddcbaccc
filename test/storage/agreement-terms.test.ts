/**
 * Agreements carry their purpose, the data they share and the disposition rule (migration 0011):
 * agreements recorded before get an empty purpose, every kind of data and the configured period;
 * new ones are checked before anything is written.
 */
import type { Kysely } from 'kysely'
import { describe, expect, it } from 'vitest'
import { agreementInForceAt, deletionDueAt, parseDataCategories } from '../../src/domain/agreement-terms.js'
import { ConflictError } from '../../src/domain/errors.js'
import { createOrganisation, listAgreements } from '../../src/storage/access-repository.js'
import { recordAgreement } from '../../src/cases/agreement-record.js'
import type { Storage } from '../../src/storage/connection.js'
import { migrateBesideOtherTests, openTestStorage } from '../helper.js'
import { perTest } from '../support/built.js'

const DAY = 86_400_000
const T0 = Date.parse('2026-01-31T00:00:00.000Z')

describe('agreement terms', () => {
  const storage = perTest(async () => openTestStorage())

  async function open(upTo?: string, dispositionDays?: number): Promise<Storage> {
    await migrateBesideOtherTests(
      storage,
      upTo,
      dispositionDays === undefined ? undefined : { agreementDispositionDays: dispositionDays },
    )
    return storage
  }

  it('gives agreements recorded before an empty purpose, every kind of data and the configured period', async () => {
    const opened = await open('0009-webhook-trust')
    const db = opened.db as unknown as Kysely<Record<string, Record<string, unknown>>>
    // Written as the code of 0009 wrote it: today's createOrganisation fills columns added since.
    const org = { id: '00000000-0000-4000-8000-0000000000aa' }
    await db
      .insertInto('organisations')
      .values({ id: org.id, name: 'Acme Learning', status: 'active', created_at: new Date(T0).toISOString() })
      .execute()
    await db
      .insertInto('agreements')
      .values({
        id: '00000000-0000-4000-8000-000000000001',
        organisation_id: org.id,
        signed_at: new Date(T0).toISOString(),
        expires_at: null,
        ended_at: null,
        document_ref: 'DSA-OLD',
        created_at: new Date(T0).toISOString(),
      })
      .execute()
    await migrateBesideOtherTests(opened, undefined, { agreementDispositionDays: 14 })
    const [old] = await listAgreements(opened.db, org.id)
    expect([old!.purpose, old!.data_categories, old!.disposition_days]).toEqual(['', 'first_name tier progress', 14])
    // Recorded afterwards without terms (fixtures, seeds): the same, with the built-in period.
    const plain = await recordAgreement(
      opened.db,
      { organisationId: org.id, signedAt: T0, expiresAt: null, documentRef: 'DSA-PLAIN' },
      T0,
    )
    expect([plain.purpose, plain.data_categories, plain.disposition_days]).toEqual(['', 'first_name tier progress', 30])
  })

  it('stores the terms given, one line of purpose and the categories in their order, and refuses bad ones', async () => {
    const { db } = await open()
    const org = await createOrganisation(db, 'Acme Learning', T0)
    const base = { organisationId: org.id, signedAt: T0, expiresAt: T0 + 365 * DAY, documentRef: 'DSA-1' }
    const row = await recordAgreement(
      db,
      { ...base, purpose: ' Reading\n practice ', dataCategories: ['progress', 'first_name'], dispositionDays: 0 },
      T0,
    )
    expect(await listAgreements(db, org.id)).toEqual([row])
    expect([row.purpose, row.data_categories, row.disposition_days]).toEqual([
      'Reading practice',
      'first_name progress',
      0,
    ])
    for (const terms of [
      { purpose: ' ' },
      { purpose: 'x'.repeat(1001) },
      { purpose: 'p', dataCategories: [] },
      { purpose: 'p', dispositionDays: -1 },
      { purpose: 'p', dispositionDays: 3651 },
      { purpose: 'p', dispositionDays: 1.5 },
    ])
      await expect(recordAgreement(db, { ...base, ...terms }, T0), JSON.stringify(terms)).rejects.toThrow(ConflictError)
    expect(await listAgreements(db, org.id)).toHaveLength(1)
  })
})

describe('agreement terms, the rules', () => {
  const iso = (ms: number) => new Date(ms).toISOString()
  const dates = (signed: number, expires: number | null, ended: number | null) => ({
    signedAt: iso(signed),
    expiresAt: expires === null ? null : iso(expires),
    endedAt: ended === null ? null : iso(ended),
  })

  it('reads categories in any order, case or separator, and names what is accepted', () => {
    expect(parseDataCategories('Progress, first-name  tier tier')).toEqual(['first_name', 'tier', 'progress'])
    expect(() => parseDataCategories('tier surname')).toThrow(/unknown data category "surname": use any of/)
    expect(() => parseDataCategories(' ')).toThrow(/at least one/)
  })

  it('dates the deletion from the earlier of expiry and end, and none while open-ended', () => {
    expect(deletionDueAt(dates(T0, T0 + 10 * DAY, null), 30)).toBe(iso(T0 + 40 * DAY))
    expect(deletionDueAt(dates(T0, T0 + 10 * DAY, T0 + 2 * DAY), 30)).toBe(iso(T0 + 32 * DAY))
    expect(deletionDueAt(dates(T0, null, null), 30)).toBeNull()
  })

  it('finds the agreement in force at a moment: the one signed last among those in force, none outside them', () => {
    const first = { id: 'first', ...dates(T0, T0 + 100 * DAY, null) }
    const second = { id: 'second', ...dates(T0 + 50 * DAY, null, T0 + 200 * DAY) }
    const agreements = [second, first]
    expect(agreementInForceAt(agreements, T0 - 1)).toBeUndefined()
    expect(agreementInForceAt(agreements, T0)?.id).toBe('first')
    expect(agreementInForceAt(agreements, T0 + 60 * DAY)?.id).toBe('second')
    expect(agreementInForceAt(agreements, T0 + 150 * DAY)?.id).toBe('second')
    expect(agreementInForceAt(agreements, T0 + 200 * DAY)).toBeUndefined()
  })
})
