/**
 * New passwords: long enough, and none of the common passwords attackers try first (NIST SP
 * 800-63B section 3.1.1.2), however its case, spacing or Unicode form is disguised.
 */
import { describe, expect, it } from 'vitest'
import { COMMON_PASSWORDS } from '../../src/domain/common-passwords.js'
import { PASSWORD_MIN_LENGTH, passwordProblem } from '../../src/domain/passwords.js'

const EMAIL = 'dana@acme-learning.example'
const COMMON = /one of the most common passwords/

describe('passwordProblem', () => {
  it('refuses every password on the common-password list', () => {
    expect(COMMON_PASSWORDS.size).toBe(308)
    for (const password of COMMON_PASSWORDS) expect(passwordProblem(password, EMAIL), password).toMatch(COMMON)
  })

  it('refuses a common password in other case, with spaces, or in another Unicode form', () => {
    for (const password of [
      'Password1234',
      'PASSWORD1234',
      'password 1234',
      ' qwerty 123456 ',
      'ｐａｓｓｗｏｒｄ１２３４', // full-width: NFKC makes it password1234
      'PasswordPassword',
    ])
      expect(passwordProblem(password, EMAIL), password).toMatch(COMMON)
  })

  it('accepts a long passphrase that is not on the list', () => {
    for (const password of ['a long and memorable phrase', 'operator password 2026', 'correct horse battery staple'])
      expect(passwordProblem(password, EMAIL), password).toBeNull()
  })

  it('keeps the list where the length rule stops: shorter entries are refused by length already', () => {
    // If the minimum length changes, regenerate the list with it (see common-passwords.ts).
    const lengths = [...COMMON_PASSWORDS].map((password) => password.length)
    expect(Math.min(...lengths)).toBe(PASSWORD_MIN_LENGTH)
    expect(passwordProblem('qwerty12345', EMAIL)).toMatch(/at least 12 characters/)
  })
})
