/**
 * Migration 0020 over accounts written before it: every partner account linked to an organisation
 * becomes that organisation's owner, from the time its application was approved (or its own time
 * when no application says so); accounts without an organisation, and operators, belong to none;
 * and the owner so made is an owner like any other.
 */
import type { Kysely } from 'kysely'
import { describe, expect, it } from 'vitest'
import { changeMemberRole, MemberRefused } from '../../src/cases/members.js'
import { knownMigrations } from '../../src/storage/migrate.js'
import { membersOf, organisationsOf } from '../../src/storage/membership-repository.js'
import { migrateBesideOtherTests, openTestStorage } from '../helper.js'
import { perTest } from '../support/built.js'

const T0 = Date.parse('2026-02-01T00:00:00.000Z')
const at = (ms: number) => new Date(ms).toISOString()
const uuid = (n: number) => `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`

/** The migration this one follows, whichever others come to stand before it. */
function before0020(): string {
  const known = knownMigrations()
  const index = known.indexOf('0020-memberships')
  expect(index).toBeGreaterThan(0)
  return known[index - 1]!
}

describe('migration 0020 over accounts linked to organisations', () => {
  const storage = perTest(async () => openTestStorage())

  it('makes each partner account linked to an organisation its owner, and no one else a member', async () => {
    await migrateBesideOtherTests(storage, before0020())
    // Rows as the code before 0020 wrote them.
    const db = storage.db as unknown as Kysely<Record<string, Record<string, unknown>>>
    await db
      .insertInto('organisations')
      .values([
        { id: uuid(101), name: 'Acme Learning', kind: 'partner', status: 'active', created_at: at(T0) },
        { id: uuid(102), name: 'Beta Tutors', kind: 'partner', status: 'suspended', created_at: at(T0) },
        { id: uuid(103), name: 'Sandbox: finn@gamma.example', kind: 'sandbox', status: 'active', created_at: at(T0) },
      ])
      .execute()
    const account = (n: number, email: string, role: string, organisation: number | null, sandbox: number | null) => ({
      id: uuid(n),
      email,
      password_hash: 'x',
      role,
      organisation_id: organisation === null ? null : uuid(organisation),
      sandbox_organisation_id: sandbox === null ? null : uuid(sandbox),
      created_at: at(T0 + n * 1000),
    })
    await db
      .insertInto('accounts')
      .values([
        account(1, 'dana@acme.example', 'partner', 101, null),
        account(2, 'eve@beta.example', 'partner', 102, null),
        account(3, 'finn@gamma.example', 'partner', null, 103),
        account(4, 'ops@example.org', 'operator', null, null),
      ])
      .execute()
    const application = (n: number, state: string, decidedAt: number | null, organisation: number | null) => ({
      id: uuid(200 + n),
      account_id: uuid(1),
      organisation_name: 'Acme Learning',
      website: 'https://acme.example',
      contact_name: 'Dana',
      contact_email: 'dana@acme.example',
      intended_use: 'Placement',
      requested_scopes: 'students:read',
      state,
      decision_reason: state === 'rejected' ? 'No agreement yet.' : null,
      decided_by: decidedAt === null ? null : 'account:ops@example.org',
      decided_at: decidedAt === null ? null : at(decidedAt),
      organisation_id: organisation === null ? null : uuid(organisation),
      created_at: at(T0),
    })
    // Dana was refused once, then approved; Eve's organisation came from the CLI, with no application.
    await db
      .insertInto('applications')
      .values([application(1, 'rejected', T0 + 50_000, null), application(2, 'approved', T0 + 90_000, 101)])
      .execute()

    await migrateBesideOtherTests(storage)

    expect(await membersOf(storage.db, uuid(101))).toEqual([
      { accountId: uuid(1), email: 'dana@acme.example', role: 'owner', since: at(T0 + 90_000) },
    ])
    expect(await membersOf(storage.db, uuid(102))).toEqual([
      { accountId: uuid(2), email: 'eve@beta.example', role: 'owner', since: at(T0 + 2000) },
    ])
    // A sandbox is its account's own, not an organisation with members.
    expect(await membersOf(storage.db, uuid(103))).toEqual([])
    expect(await organisationsOf(storage.db, uuid(3))).toEqual([])
    expect(await organisationsOf(storage.db, uuid(4))).toEqual([])
    expect(await organisationsOf(storage.db, uuid(2))).toEqual([
      { organisationId: uuid(102), name: 'Beta Tutors', status: 'suspended', role: 'owner' },
    ])

    // An owner made by the migration is the organisation's last owner like any other.
    const dana = { id: uuid(1), email: 'dana@acme.example' }
    const refused = await changeMemberRole(storage.db, uuid(101), uuid(1), 'developer', dana, T0 + 100_000).catch(
      (error: unknown) => error,
    )
    expect(refused).toBeInstanceOf(MemberRefused)
    expect((refused as MemberRefused).reason).toBe('last-owner')
  })
})
