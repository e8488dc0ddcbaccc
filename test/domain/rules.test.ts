import { describe, expect, it } from 'vitest'
import { agreementState, agreementWindow, isAgreementActive } from '../../src/domain/agreements.js'
import { firstNameProblem } from '../../src/domain/first-name.js'
import { hasScope, parseScopes, scopeBits, scopesIn } from '../../src/domain/scopes.js'

describe('agreements', () => {
  const at = (iso: string) => Date.parse(iso)
  it('are active from signing until the earlier of expiry and end', () => {
    const window = agreementWindow('2026-01-01T00:00:00.000Z', '2027-01-01T00:00:00.000Z', null)
    expect(isAgreementActive([window], at('2025-12-31T23:59:59.999Z'))).toBe(false)
    expect(isAgreementActive([window], at('2026-01-01T00:00:00.000Z'))).toBe(true)
    expect(isAgreementActive([window], at('2026-12-31T23:59:59.999Z'))).toBe(true)
    expect(isAgreementActive([window], at('2027-01-01T00:00:00.000Z'))).toBe(false)
    const ended = agreementWindow('2026-01-01T00:00:00.000Z', '2027-01-01T00:00:00.000Z', '2026-06-01T00:00:00.000Z')
    expect(isAgreementActive([ended], at('2026-06-01T00:00:00.000Z'))).toBe(false)
    const open = agreementWindow('2026-01-01T00:00:00.000Z', null, null)
    expect(isAgreementActive([ended, open], at('2030-01-01T00:00:00.000Z'))).toBe(true)
    expect(isAgreementActive([], at('2026-06-01T00:00:00.000Z'))).toBe(false)
  })
})

describe('first names', () => {
  it('accept first names, compound ones included', () => {
    for (const name of ['Ada', 'Mary-Jane', 'Anne-Marie', "D'Andre", 'Zoë', 'José', 'Łucja', 'Nguyễn', '美咲'])
      expect(firstNameProblem(name), name).toBeNull()
  })
  it('refuse anything that carries more than a first name', () => {
    for (const value of [
      '',
      ' Ada',
      'Ada ',
      'Ada Lovelace',
      'Anne Marie',
      'ada@example.org',
      'Ada2',
      'Ada.',
      'x'.repeat(41),
      42,
      null,
    ]) {
      expect(firstNameProblem(value), String(value)).not.toBeNull()
    }
  })
})

describe('scopes', () => {
  it('parse space- or comma-separated lists and refuse unknown scopes', () => {
    expect(parseScopes('students:write, students:read')).toEqual(['students:read', 'students:write'])
    expect(parseScopes('')).toEqual([])
    expect(() => parseScopes('students:read admin')).toThrow(/unknown scope "admin"/)
  })

  it('fit in the bits of one number and come back the same', () => {
    expect(scopesIn(scopeBits([]))).toEqual([])
    expect(scopesIn(scopeBits(['students:write']))).toEqual(['students:write'])
    expect(scopesIn(scopeBits(['students:write', 'students:read', 'students:write']))).toEqual([
      'students:read',
      'students:write',
    ])
    // Unknown names (a scope this version does not know) grant nothing.
    expect(scopeBits(['students:admin', ''])).toBe(0)
    expect(hasScope(scopeBits(['students:read']), 'students:read')).toBe(true)
    expect(hasScope(scopeBits(['students:read']), 'students:write')).toBe(false)
  })
})

describe('agreement state', () => {
  const day = (d: string) => `2026-${d}T00:00:00.000Z`
  const now = Date.parse(day('06-15'))
  it('is ended or expired before anything else, pending before its signing date, active otherwise', () => {
    expect(agreementState({ signedAt: day('01-01'), expiresAt: day('12-31'), endedAt: null }, now)).toBe('active')
    expect(agreementState({ signedAt: day('07-01'), expiresAt: null, endedAt: null }, now)).toBe('pending')
    expect(agreementState({ signedAt: day('01-01'), expiresAt: day('06-15'), endedAt: null }, now)).toBe('expired')
    expect(agreementState({ signedAt: day('07-01'), expiresAt: day('06-01'), endedAt: day('05-01') }, now)).toBe(
      'ended',
    )
    // The same moment as the rule the API enforces.
    for (const dates of [
      { signedAt: day('01-01'), expiresAt: day('12-31'), endedAt: null },
      { signedAt: day('07-01'), expiresAt: null, endedAt: null },
      { signedAt: day('01-01'), expiresAt: day('06-15'), endedAt: null },
    ]) {
      const active = isAgreementActive([agreementWindow(dates.signedAt, dates.expiresAt, dates.endedAt)], now)
      expect(agreementState(dates, now) === 'active').toBe(active)
    }
  })
})
