import { describe, expect, it } from 'vitest'
import { createOrganisation } from '../../src/storage/access-repository.js'
import { type DisclosureAction, type DisclosureOutcome, recordDisclosure } from '../../src/storage/disclosure-log.js'
import { cli, jsonOf, newDatabaseUrl, useCliHarness, withStorage } from './cli-harness.js'

const ADA = '11111111-1111-4111-8111-111111111111'
const BEN = '22222222-2222-4222-8222-222222222222'
const KEY_A = 'aaaaaaaa-aaaa-4aaa-8aaa-aaaaaaaaaaaa'
const KEY_B = 'bbbbbbbb-bbbb-4bbb-8bbb-bbbbbbbbbbbb'

interface Seeded {
  databaseUrl: string
  acme: string
  beta: string
}

/** Six records over three days, two organisations, two keys, two students. */
async function seed(): Promise<Seeded> {
  const databaseUrl = newDatabaseUrl()
  const ids = await withStorage(databaseUrl, async ({ db }) => {
    const acme = (await createOrganisation(db, 'Acme Learning', Date.parse('2026-01-01T00:00:00Z'))).id
    const beta = (await createOrganisation(db, 'Beta Tutors', Date.parse('2026-01-01T00:00:00Z'))).id
    const rows: [string, string, string, string, DisclosureAction, DisclosureOutcome][] = [
      ['2026-03-01T09:00:00.000Z', acme, KEY_A, ADA, 'progress.read', 'disclosed'],
      ['2026-03-01T10:00:00.000Z', acme, KEY_A, BEN, 'enroll', 'updated'],
      ['2026-03-02T09:00:00.000Z', beta, KEY_B, BEN, 'progress.read', 'disclosed'],
      ['2026-03-02T12:00:00.000Z', acme, KEY_A, ADA, 'progress.read', 'denied_agreement'],
      ['2026-03-03T09:00:00.000Z', beta, KEY_B, ADA, 'progress.read', 'not_found'],
      ['2026-03-03T10:00:00.000Z', acme, KEY_A, ADA, 'enroll', 'unchanged'],
    ]
    for (const [at, organisationId, keyId, studentId, action, outcome] of rows) {
      await recordDisclosure(
        db,
        { at: Date.parse(at), requestId: `req-${at}`, keyId, organisationId },
        studentId,
        action,
        outcome,
      )
    }
    return { acme, beta }
  })
  return { databaseUrl, ...ids }
}

const times = (document: { disclosures: { at: string }[] }) => document.disclosures.map((row) => row.at.slice(5, 13))

useCliHarness()

describe('curriculum disclosures', () => {
  it('lists records newest first, filtered by student, organisation, key, action, outcome and time', async () => {
    const { databaseUrl, acme } = await seed()
    const run = async (...args: string[]) => {
      const result = await cli(['disclosures', ...args, '--json'], { databaseUrl })
      expect(result.status, args.join(' ')).toBe(0)
      return jsonOf(result)
    }
    const [all, student, org, orgById, key, action, outcome, window, limited] = await Promise.all([
      run(),
      run('--student', BEN),
      run('--org', 'Beta Tutors'),
      run('--org', acme, '--action', 'enroll'),
      run('--key', KEY_B),
      run('--action', 'progress.read'),
      run('--outcome', 'denied_agreement'),
      run('--since', '2026-03-02', '--until', '2026-03-03T09:00:00Z'),
      run('--limit', '2'),
    ])
    expect(all.ok).toBe(true)
    expect(all.disclosures[0]).toEqual({
      at: '2026-03-03T10:00:00.000Z',
      requestId: 'req-2026-03-03T10:00:00.000Z',
      keyId: KEY_A,
      organisationId: acme,
      studentId: ADA,
      action: 'enroll',
      outcome: 'unchanged',
    })
    expect(times(all)).toEqual(['03-03T10', '03-03T09', '03-02T12', '03-02T09', '03-01T10', '03-01T09'])
    expect(times(student)).toEqual(['03-02T09', '03-01T10'])
    expect(times(org)).toEqual(['03-03T09', '03-02T09'])
    expect(times(orgById)).toEqual(['03-03T10', '03-01T10'])
    expect(times(key)).toEqual(times(org))
    expect(times(action)).toEqual(['03-03T09', '03-02T12', '03-02T09', '03-01T09'])
    expect(times(outcome)).toEqual(['03-02T12'])
    // --since is inclusive, --until exclusive.
    expect(times(window)).toEqual(['03-02T12', '03-02T09'])
    expect(times(limited)).toEqual(['03-03T10', '03-03T09'])
  })

  it('prints a table, and refuses bad filters', async () => {
    const { databaseUrl } = await seed()
    const [table, badStudent, badOutcome, unknownOrg, none] = await Promise.all([
      cli(['disclosures', '--student', ADA], { databaseUrl }),
      cli(['disclosures', '--student', 'ada', '--json'], { databaseUrl }),
      cli(['disclosures', '--outcome', 'leaked', '--json'], { databaseUrl }),
      cli(['disclosures', '--org', 'Nobody Ltd', '--json'], { databaseUrl }),
      cli(['disclosures', '--since', '2030-01-01'], { databaseUrl }),
    ])
    expect(table.status).toBe(0)
    const lines = table.stdout.trim().split('\n')
    expect(lines[0]).toMatch(/^AT +ACTION +OUTCOME +STUDENT +ORGANISATION +KEY +REQUEST$/)
    expect(lines).toHaveLength(1 + 4 + 1)
    expect(lines[1]).toMatch(/^2026-03-03T10:00:00.000Z +enroll +unchanged +11111111-/)
    expect(lines.at(-1)).toBe('4 records')
    expect(badStudent.status).toBe(2)
    expect(jsonOf(badStudent).error.message).toMatch(/--student <uuid>/)
    expect(badOutcome.status).toBe(2)
    expect(jsonOf(badOutcome).error.message).toMatch(/Allowed choices are disclosed, updated/)
    expect(unknownOrg.status).toBe(1)
    expect(jsonOf(unknownOrg).error.message).toBe('no organisation "Nobody Ltd"')
    expect(none.stdout).toBe('no disclosure records match\n')
  })
})
