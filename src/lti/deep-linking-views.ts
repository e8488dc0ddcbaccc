/**
 * The lesson picker a teacher sees for a deep-linking request: the catalog by tier, each lesson
 * with its title, standards and number of slides, as checkboxes (radio buttons when the platform
 * takes one item only), in a form that carries the sealed request to /lti/deep-link.
 */
import { type Html, html } from '../dashboard/html.js'
import type { LessonHeading } from '../storage/catalog-repository.js'
import type { TierRow } from '../storage/tables.js'
import { ltiPage } from './lti-page.js'

export const PICKER_TITLE = 'Choose lessons to add'
const ONE = 'Choose one lesson. It is added to the course as an assignment out of 100.'
const SEVERAL = 'Choose one or more lessons. Each is added to the course as an assignment out of 100.'

function standardsOf(lesson: LessonHeading): string {
  return Object.entries(lesson.standards)
    .map(([framework, codes]) => `${framework.toUpperCase()} ${codes.join(', ')}`)
    .join('; ')
}

function lessonItem(lesson: LessonHeading, single: boolean, chosen: ReadonlySet<string>): Html {
  const id = `lesson-${lesson.slug.replace(/[^a-z0-9]+/g, '-')}`
  const standards = standardsOf(lesson)
  const slides = `${lesson.slideCount} ${lesson.slideCount === 1 ? 'slide' : 'slides'}`
  return html`<li>
<input type="${single ? 'radio' : 'checkbox'}" name="lesson" value="${lesson.slug}" id="${id}"
 aria-describedby="${id}-meta"${chosen.has(lesson.slug) ? html` checked` : ''}>
<label for="${id}">${lesson.title}<br>
<span class="meta" id="${id}-meta">${slides}${standards === '' ? '' : ` · ${standards}`}</span></label>
</li>`
}

export function pickerPage(options: {
  sealed: string
  tiers: readonly TierRow[]
  lessons: readonly LessonHeading[]
  acceptMultiple: boolean
  error?: string
  chosen?: ReadonlySet<string>
}): string {
  const single = !options.acceptMultiple
  const chosen = options.chosen ?? new Set<string>()
  const groups = options.tiers
    .map((tier) => ({ tier, lessons: options.lessons.filter((lesson) => lesson.tier === tier.id) }))
    .filter((group) => group.lessons.length > 0)
  return ltiPage(
    PICKER_TITLE,
    html`${
      options.error === undefined ? '' : html`<div class="error-summary" role="alert"><p>${options.error}</p></div>`
    }
<p>${single ? ONE : SEVERAL}</p>
<form method="post" action="deep-link">
<input type="hidden" name="dl" value="${options.sealed}">
${groups.map(
  ({ tier, lessons }) => html`<fieldset>
<legend>${tier.label} (ages ${tier.age_range})</legend>
<ul class="lessons">
${lessons.map((lesson) => lessonItem(lesson, single, chosen))}
</ul>
</fieldset>`,
)}
<button type="submit">Add to the course</button>
</form>`,
  )
}
