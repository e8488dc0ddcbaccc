/**
 * The score a progress change owes a gradebook, what an attempt's answer means for it, its retry
 * schedule, and where a line item's scores go.
 */
import { describe, expect, it } from 'vitest'
import {
  agsScore,
  MAX_SCORE_ATTEMPTS,
  nextScoreAttemptAt,
  platformGotScore,
  type ScoreAttempt,
  scoreGiven,
  scoresUrl,
  scoreVerdict,
} from '../../src/domain/lti-score.js'

const at = '2026-03-02T09:00:00.000Z'

describe('a score', () => {
  it('is InProgress and Pending without points while in progress', () => {
    expect(agsScore('sub-1', { status: 'in_progress', quiz: { right: 1, total: 1 } }, at)).toEqual({
      userId: 'sub-1',
      activityProgress: 'InProgress',
      gradingProgress: 'Pending',
      timestamp: at,
    })
  })

  it('is Completed and FullyGraded out of 100 once completed: the whole, or the share of quizzes right at once', () => {
    expect(agsScore('sub-1', { status: 'completed' }, at)).toEqual({
      userId: 'sub-1',
      scoreGiven: 100,
      scoreMaximum: 100,
      activityProgress: 'Completed',
      gradingProgress: 'FullyGraded',
      timestamp: at,
    })
    expect(scoreGiven({ status: 'completed', quiz: { right: 2, total: 3 } })).toBe(67)
    expect(scoreGiven({ status: 'completed', quiz: { right: 0, total: 4 } })).toBe(0)
    // A lesson without quizzes, or counts out of range, never make a score outside 0..100.
    expect(scoreGiven({ status: 'completed', quiz: { right: 0, total: 0 } })).toBe(100)
    expect(scoreGiven({ status: 'completed', quiz: { right: 5, total: 3 } })).toBe(100)
    expect(scoreGiven({ status: 'completed', quiz: { right: -1, total: 3 } })).toBe(0)
    expect(scoreGiven({ status: 'in_progress' })).toBeUndefined()
  })
})

describe('an attempt to send a score', () => {
  const score = (status: number | null): ScoreAttempt => ({ stage: 'score', status, error: null, response: '' })
  const token = (status: number | null): ScoreAttempt => ({ stage: 'token', status, error: null, response: '' })

  it('is sent on a 2xx, failed on a refusal, tried again on 408, 429, 5xx, no answer and any token failure', () => {
    expect([200, 201, 204].map((s) => scoreVerdict(score(s)))).toEqual(['sent', 'sent', 'sent'])
    expect([400, 401, 403, 404, 415, 422].map((s) => scoreVerdict(score(s)))).toEqual(Array(6).fill('failed'))
    expect([408, 429, 500, 502, 503, null].map((s) => scoreVerdict(score(s)))).toEqual(Array(6).fill('retry'))
    expect([400, 401, 500, null].map((s) => scoreVerdict(token(s)))).toEqual(Array(4).fill('retry'))
  })

  it('is a disclosure when the score endpoint answered anything but 401', () => {
    expect([200, 422, 500].map((s) => platformGotScore(score(s)))).toEqual([true, true, true])
    expect([401, null].map((s) => platformGotScore(score(s)))).toEqual([false, false])
    expect(platformGotScore(token(200))).toBe(false)
  })

  it('is due again on the webhooks’ schedule, and not after the last attempt', () => {
    expect(nextScoreAttemptAt(1, 1000)).toBe(6000)
    expect(nextScoreAttemptAt(2, 1000)).toBe(301_000)
    expect(nextScoreAttemptAt(MAX_SCORE_ATTEMPTS - 1, 0)).not.toBeNull()
    expect(nextScoreAttemptAt(MAX_SCORE_ATTEMPTS, 0)).toBeNull()
  })
})

describe('a line item’s scores endpoint', () => {
  it('puts /scores after the path, before the query', () => {
    expect(scoresUrl('https://lms.example/api/lti/courses/1/line_items/2')).toBe(
      'https://lms.example/api/lti/courses/1/line_items/2/scores',
    )
    expect(scoresUrl('https://lms.example/mod/lti/services.php/2/lineitems/3/lineitem?type_id=1')).toBe(
      'https://lms.example/mod/lti/services.php/2/lineitems/3/lineitem/scores?type_id=1',
    )
    expect(scoresUrl('https://lms.example/items/2/')).toBe('https://lms.example/items/2/scores')
  })
})
