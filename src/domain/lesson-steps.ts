/**
 * How a step through a lesson in the LTI lesson player moves the learner's progress entry
 * (docs/lti.md#progress-and-xp): opening it starts it, every page posted adds the time since the
 * page before (at most STEP_CAP_MS, so a tab left open counts little), moving on and first answers
 * earn XP (domain/lesson-xp.ts), finishing completes it. Nothing regresses: a completed lesson stays
 * completed with its first completion time, XP never decreases, and time only grows.
 */
import { lessonXp } from './lesson-xp.js'
import type { ProgressEntry } from './progress.js'

/** The most time one page counts: a learner reads a slide in less, and an idle tab counts no more. */
export const STEP_CAP_MS = 5 * 60_000

/** Where a learner is in a lesson. */
export interface LessonState {
  /** Slides moved on from, counted from the first. */
  slidesDone: number
  /** A quiz slide's index -> whether its first answer was right. */
  firstTries: Readonly<Record<number, boolean>>
  /** When the learner's last page of the lesson was shown (milliseconds since the epoch). */
  lastStepAt: number
}

export type LessonStep =
  /** The lesson opened (a launch): its time starts here; the time since an earlier visit is not counted. */
  | { kind: 'open' }
  /** A page posted that only shows a slide (previous, back to the start). */
  | { kind: 'view' }
  /** Moved on from slide `slide` (0-based). */
  | { kind: 'leave'; slide: number }
  /** Answered the quiz on slide `slide`. */
  | { kind: 'answer'; slide: number; right: boolean }
  /** Finished the lesson of `slideCount` slides from its last one. */
  | { kind: 'finish'; slideCount: number }

export interface StepOutcome {
  state: LessonState
  entry: ProgressEntry
  /** Whether `entry` differs from the entry before: a change to record. */
  changed: boolean
}

/** A fresh state, as at the first opening of the lesson at `now`. */
export function newLessonState(now: number): LessonState {
  return { slidesDone: 0, firstTries: {}, lastStepAt: now }
}

/** The seconds a step at `now` adds: the time since the page before, capped, never negative. */
export function stepSeconds(state: LessonState, step: LessonStep, now: number): number {
  if (step.kind === 'open') return 0
  return Math.round(Math.min(STEP_CAP_MS, Math.max(0, now - state.lastStepAt)) / 1000)
}

/** The state after `step`: the furthest slide moved on from, a quiz's first answer kept as it was. */
export function nextState(state: LessonState, step: LessonStep, now: number): LessonState {
  let { slidesDone, firstTries } = state
  if (step.kind === 'leave') slidesDone = Math.max(slidesDone, step.slide + 1)
  if (step.kind === 'finish') slidesDone = Math.max(slidesDone, step.slideCount)
  if (step.kind === 'answer' && !(step.slide in firstTries)) firstTries = { ...firstTries, [step.slide]: step.right }
  return { slidesDone, firstTries, lastStepAt: Math.max(now, state.lastStepAt) }
}

/**
 * The step's outcome for the lesson `lessonSlug`: the new state and the progress entry it makes of
 * `previous` (the stored entry, possibly written by an import, or undefined when there is none).
 */
export function takeStep(
  lessonSlug: string,
  previous: ProgressEntry | undefined,
  state: LessonState,
  step: LessonStep,
  now: number,
): StepOutcome {
  const next = nextState(state, step, now)
  const at = new Date(now).toISOString()
  const completed = previous?.status === 'completed' || step.kind === 'finish'
  const earned = lessonXp({
    slidesDone: next.slidesDone,
    firstTriesRight: Object.values(next.firstTries).filter(Boolean).length,
  })
  const entry: ProgressEntry = {
    lessonSlug,
    status: completed ? 'completed' : 'in_progress',
    xp: Math.max(previous?.xp ?? 0, earned),
    timeSeconds: (previous?.timeSeconds ?? 0) + stepSeconds(state, step, now),
    startedAt: previous?.startedAt ?? at,
    completedAt: previous?.completedAt ?? (completed ? at : null),
  }
  const changed =
    previous === undefined ||
    previous.status !== entry.status ||
    previous.xp !== entry.xp ||
    previous.timeSeconds !== entry.timeSeconds ||
    previous.completedAt !== entry.completedAt
  return { state: next, entry, changed }
}
