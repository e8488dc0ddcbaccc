/**
 * What an SMTP failure means for its message (docs/email.md): an answer from the server decides
 * (5xx failed, 4xx sent again later), and without one the line is whether the whole body had
 * been sent; and the retry schedule's end. Also the one-mailbox rule for recipients.
 */
import { describe, expect, it } from 'vitest'
import { isMailRecipient } from '../../src/domain/email.js'
import {
  failureText,
  MAIL_RETRY_DELAYS_MS,
  MAX_MAIL_ATTEMPTS,
  mailVerdict,
  nextMailAttemptAt,
} from '../../src/domain/mail-outcome.js'

describe('mail outcomes', () => {
  it('fails on a 5xx and retries on a 4xx, before or after the body', () => {
    for (const bodySent of [false, true]) {
      expect(mailVerdict({ code: 'EENVELOPE', command: 'RCPT TO', responseCode: 550, message: 'x', bodySent })).toBe(
        'failed',
      )
      expect(mailVerdict({ code: 'EMESSAGE', command: 'DATA', responseCode: 552, message: 'x', bodySent })).toBe(
        'failed',
      )
      expect(mailVerdict({ code: 'EENVELOPE', command: 'MAIL FROM', responseCode: 451, message: 'x', bodySent })).toBe(
        'retry',
      )
      expect(mailVerdict({ code: 'ECONNECTION', command: 'CONN', responseCode: 421, message: 'x', bodySent })).toBe(
        'retry',
      )
    }
  })

  it('retries a failure without an answer before the whole body was sent, and interrupts one after', () => {
    for (const code of ['ESOCKET', 'ETIMEDOUT', 'ECONNECTION', 'EDNS', 'ETLS', 'EABORT']) {
      expect(mailVerdict({ code, command: 'CONN', message: 'x', bodySent: false }), code).toBe('retry')
      expect(mailVerdict({ code, command: 'CONN', message: 'x', bodySent: true }), code).toBe('interrupted')
    }
    // An unexpected 2xx or 3xx is no refusal: the body decides.
    expect(mailVerdict({ code: 'EPROTOCOL', responseCode: 250, message: 'x', bodySent: true })).toBe('interrupted')
  })

  it('waits longer before each retry, and has none left after the last', () => {
    const now = Date.UTC(2026, 0, 1)
    expect(MAX_MAIL_ATTEMPTS).toBe(MAIL_RETRY_DELAYS_MS.length + 1)
    for (let attempts = 1; attempts < MAX_MAIL_ATTEMPTS; attempts++)
      expect(nextMailAttemptAt(attempts, now)).toBe(now + MAIL_RETRY_DELAYS_MS[attempts - 1]!)
    expect(nextMailAttemptAt(MAX_MAIL_ATTEMPTS, now)).toBeNull()
    expect([...MAIL_RETRY_DELAYS_MS]).toEqual([...MAIL_RETRY_DELAYS_MS].sort((a, b) => a - b))
  })

  it('says what failed in one line: the server’s answer, or the connection’s code', () => {
    expect(
      failureText({
        code: 'EENVELOPE',
        command: 'RCPT TO',
        responseCode: 550,
        message: '550 No\r\nsuch',
        bodySent: false,
      }),
    ).toBe('550 No such (RCPT TO)')
    expect(failureText({ code: 'ESOCKET', message: 'connect ECONNREFUSED 127.0.0.1:25', bodySent: false })).toBe(
      'ESOCKET: connect ECONNREFUSED 127.0.0.1:25',
    )
    expect(failureText({ message: 'x'.repeat(900), bodySent: false })).toHaveLength(500)
  })
})

describe('a mail recipient', () => {
  it('is one plain address, never a list, a name or a header', () => {
    expect(isMailRecipient('ops@example.org')).toBe(true)
    expect(isMailRecipient('o.p+s@mail.example.org')).toBe(true)
    for (const refused of [
      '',
      'ops',
      'ops@localhost',
      'a@example.org, b@example.org',
      'a@example.org;b@example.org',
      'Ops <ops@example.org>',
      '"ops"@example.org',
      'ops@example.org\r\nBcc: x@example.org',
      `${'a'.repeat(250)}@example.org`,
    ])
      expect(isMailRecipient(refused), refused).toBe(false)
  })
})
