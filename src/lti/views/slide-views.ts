/**
 * Each kind of slide as HTML (src/catalog/slides.ts lists the kinds): plain markup, no script.
 * A quiz shows its question and choices only; whether an answer is right is decided on the
 * server when it is posted, so the right choice is never in the page before the learner answers.
 */
import type { Slide } from '../../catalog/slides.js'
import { type Html, html } from '../../dashboard/html.js'

/** Where the forms post: the player, with the answer's feedback scrolled into view after a quiz answer. */
export const PLAYER_ACTION = '/lti/lesson'

export interface QuizAnswer {
  choice: number
  right: boolean
}

/** What a quiz slide shows beyond its question: the answer just checked, or that none was chosen. */
export interface QuizState {
  answered?: QuizAnswer
  missing?: boolean
}

const LANGUAGES: Record<Extract<Slide, { type: 'code' }>['language'], string> = {
  javascript: 'JavaScript',
  pseudocode: 'Pseudocode',
  python: 'Python',
}

/** The fields every form of the player carries: the sealed session and the slide shown. */
export function sessionFields(token: string, index: number): Html {
  return html`<input type="hidden" name="s" value="${token}">
<input type="hidden" name="slide" value="${index}">`
}

/** The slide's heading, for the page's title. */
export function slideHeading(slide: Slide): string {
  return slide.type === 'quiz' ? 'Quiz' : slide.heading
}

export function slideBody(slide: Slide, index: number, token: string, quiz: QuizState = {}): Html {
  switch (slide.type) {
    case 'bullets':
      return html`<h2>${slide.heading}</h2>
<ul>${slide.points.map((point) => html`<li>${point}</li>`)}</ul>`
    case 'activity':
      return html`<h2>${slide.heading}</h2>
<p>Try this, one step at a time:</p>
<ol>${slide.steps.map((step) => html`<li>${step}</li>`)}</ol>`
    case 'vocabulary':
      return html`<h2>${slide.heading}</h2>
<dl>${slide.terms.map((term) => html`<div><dt>${term.term}</dt><dd>${term.definition}</dd></div>`)}</dl>`
    case 'code': {
      const language = LANGUAGES[slide.language]
      return html`<h2>${slide.heading}</h2>
<p class="code-language" id="code-${index}">${language} code</p>
<div class="code" role="region" aria-labelledby="code-${index}" tabindex="0"><pre><code class="language-${
        slide.language
      }">${slide.code}</code></pre></div>
<p>${slide.explanation}</p>`
    }
    case 'quiz':
      return quizBody(slide, index, token, quiz)
  }
}

function quizBody(slide: Extract<Slide, { type: 'quiz' }>, index: number, token: string, quiz: QuizState): Html {
  const { answered, missing } = quiz
  const feedback =
    answered === undefined
      ? ''
      : answered.right
        ? html`<div class="feedback right" id="feedback" tabindex="-1">
<h3><span aria-hidden="true">\u2713</span> Right!</h3>
<p>${slide.explanation}</p>
</div>`
        : html`<div class="feedback wrong" id="feedback" tabindex="-1">
<h3><span aria-hidden="true">\u2717</span> Not quite</h3>
<p>The answer is \u201c${slide.choices[slide.answer]}\u201d.</p>
<p>${slide.explanation}</p>
</div>`
  const choices = slide.choices.map(
    (choice, k) => html`<div class="choice">
<input type="radio" id="choice-${k}" name="answer" value="${k}" required${
      answered?.choice === k ? html` checked` : ''
    }${missing ? html` aria-describedby="answer-error" aria-invalid="true"` : ''}>
<label for="choice-${k}">${choice}</label>
</div>`,
  )
  const checkLabel = answered === undefined ? 'Check my answer' : 'Check again'
  return html`<h2>Quiz</h2>
${feedback}
<form method="post" action="${PLAYER_ACTION}#feedback">
${sessionFields(token, index)}
<fieldset>
<legend>${slide.question}</legend>
${missing ? html`<p class="field-error" id="answer-error">Choose one of the answers, then check it.</p>` : ''}
${choices}
</fieldset>
<button type="submit" name="action" value="answer">${checkLabel}</button>
</form>`
}
