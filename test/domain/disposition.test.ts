/**
 * Which end an organisation is in, when it is due and since when it covers the students shared
 * (domain/disposition.ts); the canonical JSON a certificate's signature covers
 * (domain/canonical-json.ts), and what a certificate says of the attestation.
 */
import { describe, expect, it } from 'vitest'
import { canonicalJson } from '../../src/domain/canonical-json.js'
import { type CertificateFacts, certificateOf } from '../../src/domain/deletion-certificate.js'
import {
  coverageSince,
  currentEnd,
  deadlineRoles,
  type DisposableAgreement,
  isDispositionDue,
} from '../../src/domain/disposition.js'

const DAY = 86_400_000
const T = Date.parse('2026-06-01T00:00:00.000Z')
const iso = (ms: number) => new Date(ms).toISOString()

function agreement(
  id: string,
  signed: number,
  end: { expires?: number; ended?: number },
  days = 30,
): DisposableAgreement {
  return {
    id,
    signedAt: iso(signed),
    expiresAt: end.expires === undefined ? null : iso(end.expires),
    endedAt: end.ended === undefined ? null : iso(end.ended),
    dispositionDays: days,
  }
}

describe('the end an organisation is in', () => {
  it('is none while an agreement is in force or none has ended', () => {
    expect(currentEnd([], T)).toBeUndefined()
    expect(currentEnd([agreement('a', T - 10 * DAY, {})], T)).toBeUndefined()
    expect(
      currentEnd([agreement('a', T - 10 * DAY, { ended: T - DAY }), agreement('b', T - DAY, {})], T),
    ).toBeUndefined()
    // Ends tomorrow: not yet.
    expect(currentEnd([agreement('a', T - 10 * DAY, { expires: T + DAY })], T)).toBeUndefined()
  })

  it('is the agreement that stopped applying last, counted from its own end and period', () => {
    const end = currentEnd(
      [
        agreement('early', T - 100 * DAY, { ended: T - 50 * DAY }, 90),
        agreement('late', T - 40 * DAY, { expires: T - 20 * DAY, ended: T - 10 * DAY }, 5),
      ],
      T,
    )
    expect(end).toMatchObject({
      agreement: { id: 'late' },
      endedAt: iso(T - 20 * DAY),
      deletionDueAt: iso(T - 15 * DAY),
    })
    expect(isDispositionDue(end!, T)).toBe(true)
    expect(isDispositionDue(end!, T - 15 * DAY - 1)).toBe(false)
  })

  it('passes over an agreement ended before it took effect, and takes the one signed last of a tie', () => {
    const end = currentEnd(
      [
        agreement('never', T - 5 * DAY, { ended: T - 6 * DAY }),
        agreement('first', T - 90 * DAY, { ended: T - 30 * DAY }),
        agreement('second', T - 60 * DAY, { ended: T - 30 * DAY }),
      ],
      T,
    )
    expect(end?.agreement.id).toBe('second')
  })
})

describe('canonical JSON (RFC 8785)', () => {
  it('sorts members at every depth, drops whitespace, and writes strings as JSON.stringify does', () => {
    expect(canonicalJson({ b: [3, { z: null, a: true }], a: 'x\u2028"\u00e9\u0001', c: 10 })).toBe(
      '{"a":"x\u2028\\"\u00e9\\u0001","b":[3,{"a":true,"z":null}],"c":10}',
    )
    // Names compared by UTF-16 code units: upper case before lower case.
    expect(canonicalJson({ b: 1, B: 2, a: 3 })).toBe('{"B":2,"a":3,"b":1}')
    expect(() => canonicalJson({ n: Number.NaN })).toThrow(/NaN/)
  })
})

describe('since when an end covers the students shared', () => {
  it('is the start of the first agreement applying after the previous disposition', () => {
    const first = agreement('first', T - 100 * DAY, { ended: T - 60 * DAY })
    // Renewed within the first's period: the first's data is handed on to the second.
    const second = agreement('second', T - 50 * DAY, { ended: T - 10 * DAY })
    expect(coverageSince([first, second], iso(T - 10 * DAY), null)).toBe(iso(T - 100 * DAY))
    // The first was disposed of (its links ended) before the second: the second starts clean.
    expect(coverageSince([first, second], iso(T - 10 * DAY), iso(T - 55 * DAY))).toBe(iso(T - 50 * DAY))
    // An agreement signed after the end is no part of it.
    expect(coverageSince([first, agreement('later', T, {})], iso(T - 60 * DAY), null)).toBe(iso(T - 100 * DAY))
  })
})

describe("a certificate's statement of the attestation", () => {
  const facts = (attested: number | null | undefined): CertificateFacts => ({
    organisation: { id: 'o', name: 'Acme' },
    agreement: {
      id: 'a',
      reference: 'DSA-1',
      purpose: 'p',
      dataCategories: ['tier'],
      signedAt: iso(T - 100 * DAY),
      dispositionDays: 30,
    },
    endedAt: iso(T - 40 * DAY),
    deletionDueAt: iso(T - 10 * DAY),
    unlinkedAt: iso(T - 10 * DAY),
    attestation:
      attested === undefined
        ? null
        : {
            attestedAt: iso(T - 20 * DAY),
            by: { kind: 'api_key', keyId: 'k', name: null, prefix: null },
            students: attested,
          },
    students: { since: iso(T - 100 * DAY), linked: 2, unlinked: 1, erased: 1, list: [] },
  })
  const statement = (attested: number | null | undefined) => String(certificateOf(facts(attested), iso(T)).statement)

  it('says whether the attestation covers the whole list', () => {
    expect(statement(4)).toMatch(/the 4 students shared .* its attestation covers this whole list\.$/)
    expect(statement(3)).toMatch(/the data of the 3 students its list held then; it does not cover the 1 other,/)
    expect(statement(null)).toMatch(/how many students its attestation covered was not recorded then\.$/)
    expect(statement(undefined)).toMatch(/has not attested the deletion of their data yet\.$/)
  })
})

describe("whose deadline applies to an agreement's data", () => {
  it('is the end the organisation is in, not those whose data was handed on or already disposed of', () => {
    const old = agreement('old', T - 300 * DAY, { ended: T - 250 * DAY })
    // Recorded within old's period: old's data went on being shared under it.
    const renewal = agreement('renewal', T - 240 * DAY, { ended: T - 100 * DAY })
    const overlapping = agreement('overlapping', T - 120 * DAY, { ended: T - 20 * DAY })
    const roles = deadlineRoles([old, renewal, overlapping], new Set(), T)
    expect(Object.fromEntries(roles)).toEqual({
      old: { role: 'handed_on', to: 'renewal' },
      renewal: { role: 'handed_on', to: 'overlapping' },
      overlapping: { role: 'governs' },
    })
    // Once the links ended after old's deadline, a later agreement starts clean.
    const fresh = agreement('fresh', T - 200 * DAY, { ended: T - 20 * DAY })
    expect(Object.fromEntries(deadlineRoles([old, fresh], new Set(['old']), T))).toEqual({
      old: { role: 'disposed' },
      fresh: { role: 'governs' },
    })
    // In force: no deadline applies yet.
    expect(Object.fromEntries(deadlineRoles([old, agreement('now', T - 10 * DAY, {})], new Set(['old']), T))).toEqual({
      old: { role: 'disposed' },
      now: { role: 'none' },
    })
  })
})
