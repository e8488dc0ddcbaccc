/**
 * Partners create their own keys: sign up, a sandbox and a test key at once, live keys in the
 * dashboard once live access is approved. No problem detail or documentation page may still
 * send them to the operator for a key; the operator only approves applications, records
 * agreements, suspends organisations and revokes keys.
 */
import { describe, expect, it } from 'vitest'
import { PROBLEM_CATALOG, PROBLEM_CODES } from '../../src/errors.js'
import { AUTH_FAILURES } from '../../src/http/admission.js'
import { buildTestApp } from '../helper.js'
import { perSuite } from '../support/built.js'

/** Wordings that say keys come from the operator. */
const KEYS_FROM_THE_OPERATOR =
  /ask the operator|operator (for|issues?|creates?|gives?) (a |new |your )*keys?|keys? (are |is )?(issued|created|given) by the operator|key from the operator/i

describe('texts match the self-service flow', () => {
  const t = perSuite(() => buildTestApp())

  it('no problem in the error catalogue or among the authentication failures sends a partner to the operator for a key', () => {
    const texts = [
      ...PROBLEM_CODES.flatMap((code) =>
        (['description', 'cause', 'fix'] as const).map(
          (part) => [`catalogue ${code} ${part}`, PROBLEM_CATALOG[code][part]] as const,
        ),
      ),
      ...Object.entries(AUTH_FAILURES).map(([code, problem]) => [`AUTH_FAILURES ${code}`, problem.detail] as const),
    ]
    expect(texts.filter(([, text]) => KEYS_FROM_THE_OPERATOR.test(text))).toEqual([])
    // An expired or revoked key: the partner makes the next one in the dashboard.
    for (const code of ['api_key_expired', 'api_key_revoked'] as const) {
      expect(AUTH_FAILURES[code].detail).toMatch(/new key in the dashboard/)
      expect(PROBLEM_CATALOG[code].description).toMatch(/new key in the dashboard/)
    }
  })

  it('/docs, /docs/errors and the OpenAPI document tell of the dashboard, the sandbox and test keys, never of keys from the operator', async () => {
    const reference = (await t.call({ url: '/docs' })).body
    const errors = (await t.call({ url: '/docs/errors' })).body
    const document = (await t.call({ url: '/api/v1/openapi.json' })).body
    for (const text of [reference, errors, document]) expect(text).not.toMatch(KEYS_FROM_THE_OPERATOR)
    for (const text of [reference, document]) {
      expect(text).toMatch(/sandbox/)
      expect(text).toContain('cur_test_')
      expect(text).toContain('cur_live_')
      expect(text).toMatch(/dashboard/)
      // Student data with a live key still needs the agreement the operator records.
      expect(text).toMatch(/agreement, which the operator records/)
    }
  })
})
