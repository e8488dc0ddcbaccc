/** The lesson player's XP rule: 10 per slide moved on from, 10 per quiz right at the first try. */
import { describe, expect, it } from 'vitest'
import { lessonXp, lessonXpMax, XP_PER_FIRST_TRY, XP_PER_SLIDE } from '../../src/domain/lesson-xp.js'

describe('lesson XP', () => {
  it('is 10 per slide done and 10 per first try right', () => {
    expect([XP_PER_SLIDE, XP_PER_FIRST_TRY]).toEqual([10, 10])
    expect(lessonXp({ slidesDone: 0, firstTriesRight: 0 })).toBe(0)
    expect(lessonXp({ slidesDone: 9, firstTriesRight: 1 })).toBe(100)
    expect(lessonXp({ slidesDone: 3, firstTriesRight: 2 })).toBe(50)
    expect(lessonXp({ slidesDone: -1, firstTriesRight: -1 })).toBe(0)
  })

  it('makes a finished lesson worth 10 per slide and 10 per quiz at most', () => {
    expect(lessonXpMax([{ type: 'bullets' }, { type: 'quiz' }, { type: 'quiz' }])).toBe(50)
    expect(lessonXpMax([{ type: 'code' }])).toBe(10)
    expect(lessonXpMax([])).toBe(0)
  })
})
