/**
 * The lesson player's pages: a slide with the lesson's name and where the learner is in it, the
 * lesson finished, and the messages shown instead of a lesson. One column, landmarks and headings
 * in order, forms that work without script, sized for a phone first.
 */
import type { Slide } from '../../catalog/slides.js'
import { type Html, html } from '../../dashboard/html.js'
import { PLAYER_CSS_HREF } from '../player-assets.js'
import { PLAYER_ACTION, type QuizState, sessionFields, slideBody, slideHeading } from './slide-views.js'

export interface LessonView {
  /** The sealed session the page's forms carry. */
  token: string
  title: string
  slides: readonly Slide[]
  /** Whether the learner's work is recorded (a learner with a student; not a teacher's preview). */
  recording: boolean
}

function page(title: string, body: Html): string {
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${title}</title>
<link rel="stylesheet" href="${PLAYER_CSS_HREF}">
</head>
<body>
${body}
</body>
</html>
`.value
}

function bar(lesson: LessonView, where: string, done: number): Html {
  return html`<header class="bar">
<h1>${lesson.title}</h1>
<p class="where" id="where">${where}</p>
<progress max="${lesson.slides.length}" value="${done}" aria-labelledby="where"></progress>
${lesson.recording ? '' : html`<p class="preview">Preview: your work in this lesson is not recorded here.</p>`}
</header>`
}

/** Slide `index` of the lesson, with a quiz's answer when one was just checked. */
export function slidePage(lesson: LessonView, index: number, quiz: QuizState = {}): string {
  const slide = lesson.slides[index]!
  const count = lesson.slides.length
  const where = `Slide ${index + 1} of ${count}`
  const last = index === count - 1
  return page(
    `${slideHeading(slide)}: ${where.toLowerCase()} of ${lesson.title}`,
    html`${bar(lesson, where, index + 1)}
<main id="main" tabindex="-1">
${slideBody(slide, index, lesson.token, quiz)}
</main>
<nav class="steps" aria-label="Lesson steps">
<form method="post" action="${PLAYER_ACTION}">
${sessionFields(lesson.token, index)}
${index > 0 ? html`<button type="submit" class="secondary" name="action" value="previous">Previous</button>` : ''}
${
  last
    ? html`<button type="submit" class="next" name="action" value="finish">Finish lesson</button>`
    : html`<button type="submit" class="next" name="action" value="next">Next</button>`
}
</form>
</nav>`,
  )
}

/** The lesson finished; `xp` is what the learner's progress entry now holds (absent when nothing is recorded). */
export function finishedPage(lesson: LessonView, xp: number | undefined): string {
  const count = lesson.slides.length
  return page(
    `Lesson complete: ${lesson.title}`,
    html`${bar(lesson, 'Finished', count)}
<main id="main" tabindex="-1">
<h2>Lesson complete</h2>
<p>Well done! You worked through all ${count} slides of \u201c${lesson.title}\u201d.</p>
${xp === undefined ? '' : html`<p>You have earned <strong>${xp} XP</strong> in this lesson.</p>`}
<p>You can close this lesson now, or go through it again.</p>
</main>
<nav class="steps" aria-label="Lesson steps">
<form method="post" action="${PLAYER_ACTION}">
${sessionFields(lesson.token, 0)}
<button type="submit" class="secondary" name="action" value="review">Go through it again</button>
</form>
</nav>`,
  )
}

/** A page instead of the lesson: what happened and what to do, in the learner's words. */
export function messagePage(title: string, detail: string): string {
  return page(
    title,
    html`<main id="main">
<h1>${title}</h1>
<p>${detail}</p>
</main>`,
  )
}
