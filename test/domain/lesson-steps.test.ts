/**
 * How a step through a lesson moves its progress entry: started at the opening, time per page
 * capped, XP from the slides moved on from and first answers, completed at the finish and never
 * undone, nothing lost to an earlier entry (an import's).
 */
import { describe, expect, it } from 'vitest'
import {
  type LessonState,
  type LessonStep,
  newLessonState,
  nextState,
  STEP_CAP_MS,
  stepSeconds,
  takeStep,
} from '../../src/domain/lesson-steps.js'
import type { ProgressEntry } from '../../src/domain/progress.js'

const T0 = Date.parse('2026-03-02T09:00:00.000Z')
const SLUG = 'innovator/i1-hello-python'
const iso = (ms: number) => new Date(ms).toISOString()

/** Steps taken one after another, each `gapMs` after the one before. */
function walk(steps: readonly LessonStep[], gapMs = 30_000, previous?: ProgressEntry) {
  let state = newLessonState(T0)
  let entry = previous
  let now = T0
  const changed: boolean[] = []
  for (const step of steps) {
    const outcome = takeStep(SLUG, entry, state, step, now)
    ;({ state, entry } = outcome)
    changed.push(outcome.changed)
    now += gapMs
  }
  return { state, entry: entry!, changed }
}

describe('lesson steps', () => {
  it('starts the lesson at its opening, with no time and no XP', () => {
    const { entry, changed } = walk([{ kind: 'open' }])
    expect(entry).toEqual({
      lessonSlug: SLUG,
      status: 'in_progress',
      xp: 0,
      timeSeconds: 0,
      startedAt: iso(T0),
      completedAt: null,
    })
    expect(changed).toEqual([true])
  })

  it('counts the time since the page before, at most five minutes a page, never backwards, none at an opening', () => {
    const state: LessonState = { ...newLessonState(T0), lastStepAt: T0 }
    expect(stepSeconds(state, { kind: 'view' }, T0 + 42_400)).toBe(42)
    expect(stepSeconds(state, { kind: 'view' }, T0 + 60 * 60_000)).toBe(STEP_CAP_MS / 1000)
    expect(stepSeconds(state, { kind: 'view' }, T0 - 5_000)).toBe(0)
    expect(stepSeconds(state, { kind: 'open' }, T0 + 60_000)).toBe(0)
    expect(nextState(state, { kind: 'view' }, T0 - 5_000).lastStepAt).toBe(T0)
  })

  it('earns 10 per slide moved on from (once each) and 10 per quiz right at the first try only', () => {
    const { entry, state } = walk([
      { kind: 'open' },
      { kind: 'leave', slide: 0 },
      { kind: 'leave', slide: 1 },
      { kind: 'view' },
      { kind: 'leave', slide: 0 },
      { kind: 'answer', slide: 2, right: true },
      { kind: 'answer', slide: 2, right: false },
      { kind: 'answer', slide: 3, right: false },
      { kind: 'answer', slide: 3, right: true },
    ])
    expect(state.slidesDone).toBe(2)
    expect(state.firstTries).toEqual({ 2: true, 3: false })
    expect(entry.xp).toBe(30)
  })

  it('completes at the finish with every slide done; a later step changes time only', () => {
    const { entry } = walk([{ kind: 'open' }, { kind: 'leave', slide: 0 }, { kind: 'finish', slideCount: 4 }])
    expect(entry).toMatchObject({ status: 'completed', xp: 40, timeSeconds: 60, completedAt: iso(T0 + 60_000) })
    const later = takeStep(
      SLUG,
      entry,
      newLessonState(T0 + 1e6),
      { kind: 'answer', slide: 1, right: false },
      T0 + 1e6 + 20_000,
    )
    expect(later.entry).toEqual({ ...entry, timeSeconds: 80 })
    expect(later.changed).toBe(true)
  })

  it('keeps what an earlier entry holds: completion, its time, more XP; a step that adds nothing is no change', () => {
    const imported: ProgressEntry = {
      lessonSlug: SLUG,
      status: 'completed',
      xp: 500,
      timeSeconds: 1200,
      startedAt: '2026-01-05T10:00:00.000Z',
      completedAt: '2026-01-05T10:30:00.000Z',
    }
    const { entry, changed } = walk(
      [{ kind: 'open' }, { kind: 'leave', slide: 0 }, { kind: 'finish', slideCount: 2 }],
      10_000,
      imported,
    )
    expect(entry).toEqual({ ...imported, timeSeconds: 1220 })
    expect(changed).toEqual([false, true, true])
    // The same page posted again at once: nothing to add.
    const again = takeStep(
      SLUG,
      entry,
      { slidesDone: 2, firstTries: {}, lastStepAt: T0 },
      { kind: 'finish', slideCount: 2 },
      T0,
    )
    expect(again.changed).toBe(false)
  })
})
