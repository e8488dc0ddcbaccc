/**
 * problemJson reuses each problem's serialized body up to the request id; the result must be
 * exactly what serializing the whole body gives, for reused and one-off problems alike, and
 * for request ids a client chose (which may need escaping).
 */
import { describe, expect, it } from 'vitest'
import { PROBLEM_CATALOG, problemType, type Problem } from '../../src/errors.js'
import { AUTH_FAILURES, rateLimited, tooManyFailures } from '../../src/http/admission.js'
import { problemJson } from '../../src/http/problem-responses.js'

function plainJson(problem: Problem, requestId: string): string {
  const { status, title } = PROBLEM_CATALOG[problem.code]
  const body = { type: problemType(problem.code), title, status, detail: problem.detail, code: problem.code, requestId }
  return JSON.stringify(problem.errors === undefined ? body : { ...body, errors: problem.errors })
}

describe('problem+json bodies', () => {
  const ids = ['5f0c1d8e-2a3b-4c5d-8e9f-0a1b2c3d4e5f', 'client "quoted" \\ id', '']
  const decision = { allowed: false, limit: 100, remaining: 0, resetMs: 12_345 }
  const problems: Problem[] = [
    AUTH_FAILURES.api_key_missing,
    AUTH_FAILURES.api_key_invalid,
    rateLimited(decision, 60_000),
    tooManyFailures(decision),
    {
      code: 'invalid_request',
      detail: 'The request is invalid.',
      errors: [{ in: 'query', field: 'limit', detail: 'x' }],
    },
  ]

  it('are byte for byte the serialized body, the first time and every time after', () => {
    for (const problem of problems) {
      for (const id of ids) {
        expect(problemJson(problem, id)).toBe(plainJson(problem, id))
        expect(problemJson(problem, id)).toBe(plainJson(problem, id))
      }
    }
  })

  it('reuse one refusal object per limit and retry time, and tell different retry times apart', () => {
    expect(rateLimited(decision, 60_000)).toBe(rateLimited({ ...decision }, 60_000))
    const later = rateLimited({ ...decision, resetMs: 30_000 }, 60_000)
    expect(later).not.toBe(rateLimited(decision, 60_000))
    expect(later.detail).toContain('retry in 30 seconds')
    expect(later.headers).toEqual({ 'retry-after': '30' })
    expect(rateLimited({ ...decision, limit: 5 }, 60_000).detail).toContain('made 5 requests')
  })
})
