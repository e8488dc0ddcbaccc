import { describe, expect, it } from 'vitest'
import { IllegalTransition, nextApplicationState, nextOrganisationStatus } from '../../src/domain/application-state.js'
import { hashPassword, passwordProblem, verifyPassword } from '../../src/domain/passwords.js'

describe('application and organisation state machine', () => {
  it('allows exactly the documented transitions', () => {
    expect(nextApplicationState('submitted', 'approve')).toBe('approved')
    expect(nextApplicationState('submitted', 'reject')).toBe('rejected')
    for (const from of ['approved', 'rejected'] as const) {
      for (const event of ['approve', 'reject'] as const) {
        expect(() => nextApplicationState(from, event)).toThrow(IllegalTransition)
      }
    }
    expect(nextOrganisationStatus('active', 'suspend')).toBe('suspended')
    expect(nextOrganisationStatus('suspended', 'reinstate')).toBe('active')
    expect(() => nextOrganisationStatus('active', 'reinstate')).toThrow(/not suspended/)
    expect(() => nextOrganisationStatus('suspended', 'suspend')).toThrow(/already suspended/)
  })

  it('says what is wrong in words', () => {
    expect(() => nextApplicationState('rejected', 'approve')).toThrow(
      'This application is already rejected; it cannot be approved now.',
    )
  })
})

describe('passwords', () => {
  it('hash with scrypt and a salt, and verify', async () => {
    const hash = await hashPassword('correct horse battery staple')
    expect(hash).toMatch(/^scrypt\$32768\$8\$1\$[\w-]+\$[\w-]+$/)
    expect(await hashPassword('correct horse battery staple')).not.toBe(hash)
    expect(await verifyPassword('correct horse battery staple', hash)).toBe(true)
    expect(await verifyPassword('correct horse battery stapl', hash)).toBe(false)
  })

  it('refuse short passwords and ones built from the e-mail address', () => {
    expect(passwordProblem('short', 'a@b.org')).toMatch(/at least 12/)
    expect(passwordProblem('priya.partner2026!', 'priya.partner@b.org')).toMatch(/e-mail/)
    expect(passwordProblem('aaaaaaaaaaaaaa', 'x@b.org')).toMatch(/repeat/)
    expect(passwordProblem('a long and memorable phrase', 'x@b.org')).toBeNull()
  })
})
