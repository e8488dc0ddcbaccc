/**
 * The XP a lesson worked through in the LTI lesson player earns (docs/lti.md#progress-and-xp):
 * 10 for each slide the learner moved on from (the last one by finishing the lesson) and 10 more
 * for each quiz answered right at the first try, ever. A finished lesson of `n` slides with every
 * one of its `q` quizzes right at once is therefore worth `10n + 10q`; a second try earns nothing,
 * so trying every choice in turn pays no more than guessing once.
 */

export const XP_PER_SLIDE = 10
export const XP_PER_FIRST_TRY = 10

/** What the learner has done in a lesson, as the player keeps it. */
export interface LessonWork {
  /** Slides moved on from, counted from the first. */
  slidesDone: number
  /** Quizzes whose first answer was right. */
  firstTriesRight: number
}

/**
 * @example
 * lessonXp({ slidesDone: 9, firstTriesRight: 1 }) // 100
 */
export function lessonXp(work: LessonWork): number {
  return XP_PER_SLIDE * Math.max(0, work.slidesDone) + XP_PER_FIRST_TRY * Math.max(0, work.firstTriesRight)
}

/** The most a lesson of these slides can earn: every slide done, every quiz right at once. */
export function lessonXpMax(slides: readonly { type: string }[]): number {
  return lessonXp({
    slidesDone: slides.length,
    firstTriesRight: slides.filter((slide) => slide.type === 'quiz').length,
  })
}
