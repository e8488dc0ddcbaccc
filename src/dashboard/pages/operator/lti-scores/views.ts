/**
 * The LTI scores page: how many scores are in each state, a filter by state, and the scores
 * newest first, each with its platform, lesson, student, what it says, its timestamp, its state
 * (a "Send again" button when failed), attempts, the last status and the platform's answer.
 */
import type { FastifyRequest } from 'fastify'
import type { AgsScore } from '../../../../domain/lti-score.js'
import type { ListedScore, ScoreCursor } from '../../../../storage/lti-score-repository.js'
import type { LtiScoreState } from '../../../../storage/tables.js'
import { type Html, html } from '../../../html.js'
import { csrfField } from '../../../layout.js'
import { utcMinute } from '../../../times.js'
import { scrollTable, tableRow } from '../../../views/table.js'

export const SCORES_PATH = '/dashboard/operator/lti/scores'

export const SCORE_STATES: readonly LtiScoreState[] = ['pending', 'sent', 'failed', 'cancelled']

export interface ScoresView {
  page: { rows: readonly ListedScore[]; next: ScoreCursor | null }
  /** The state shown, or all. */
  state: LtiScoreState | undefined
  /** This is the first page. */
  first: boolean
  counts: Partial<Record<LtiScoreState, number>>
  /** The score just queued again, for the notice. */
  again: string | undefined
}

function pageUrl(state: LtiScoreState | undefined, before?: ScoreCursor): string {
  const query = new URLSearchParams()
  if (state !== undefined) query.set('state', state)
  if (before !== undefined) query.set('before', `${before.createdAt}~${before.id}`)
  const text = query.toString()
  return text === '' ? SCORES_PATH : `${SCORES_PATH}?${text}`
}

/** What the score tells the gradebook. */
function said(row: ListedScore): string {
  try {
    const score = JSON.parse(row.payload) as AgsScore
    return score.scoreGiven === undefined
      ? 'in progress'
      : `completed: ${score.scoreGiven} of ${score.scoreMaximum ?? '?'}`
  } catch {
    return ''
  }
}

function state(request: FastifyRequest, row: ListedScore): Html {
  const badge = html`<span class="state ${row.state}">${row.state}</span>`
  if (row.state === 'pending' && row.attempts > 0 && row.next_attempt_at !== null)
    return html`${badge} next attempt at ${utcMinute(row.next_attempt_at)}`
  if (row.state === 'sent' && row.sent_at !== null) return html`${badge} ${utcMinute(row.sent_at)}`
  if (row.state !== 'failed') return badge
  const action = `${SCORES_PATH}/${row.id}/send-again`
  return html`${badge}<form method="post" action="${action}" class="send-again">${csrfField(request)}
<button type="submit">Send again<span class="visually-hidden"> (score ${row.id})</span></button></form>`
}

/** The last status or error, and the platform's answer to read. */
function lastAnswer(row: ListedScore): Html {
  const status = row.last_status === null ? '' : `HTTP ${row.last_status}`
  const error = row.last_error ?? ''
  const summary = [status, error].filter((part) => part !== '').join(': ')
  if (row.last_response === null) return html`${summary}`
  const hidden = html`<span class="visually-hidden"> (score ${row.id})</span>`
  return html`${summary}<details><summary>The platform's answer${hidden}</summary>
<pre class="mail-body">${row.last_response}</pre></details>`
}

export function scoresBody(request: FastifyRequest, view: ScoresView): Html {
  const { rows, next } = view.page
  const counted = SCORE_STATES.filter((s) => (view.counts[s] ?? 0) > 0).map((s) => `${view.counts[s]} ${s}`)
  const filter = (label: string, value: LtiScoreState | undefined) =>
    html`<a href="${pageUrl(value)}"${view.state === value ? html` aria-current="true"` : ''}>${label}</a>`
  const table = scrollTable({
    caption: 'Scores, newest first',
    headings: [
      'Queued (UTC)',
      'Platform',
      'Lesson',
      'Student',
      'Score',
      'Timestamp',
      'State',
      'Attempts',
      'Last answer',
    ],
    rows: rows.map((row) =>
      tableRow([
        utcMinute(row.created_at),
        html`${row.registration_name ?? row.registration_id}<br><span class="hint">link ${row.resource_link_id}</span>`,
        html`<code>${row.lesson_slug}</code>`,
        html`<a href="/dashboard/operator/students/${row.student_id}/disclosures"><code>${row.student_id}</code></a>`,
        said(row),
        row.timestamp,
        state(request, row),
        String(row.attempts),
        lastAnswer(row),
      ]),
    ),
  })
  const none = view.first ? 'No score yet.' : 'No older score.'
  const filters = [filter('all', undefined), ...SCORE_STATES.map((s) => filter(s, s))]
  return html`${
    view.again === undefined
      ? ''
      : html`<p class="notice" role="status">Score ${view.again} was queued again: it is sent within seconds.</p>`
  }
<p>Each progress change of a student who came from an LTI platform queues a score for the platform's
gradebook. A score is sent only while its registration is active and its organisation has an agreement in
force; one that cannot be sent any more is cancelled. A failed score shows the platform's answer: fix what it
says, then send it again.</p>
<p>${counted.length === 0 ? 'No score is queued.' : `Scores: ${counted.join(', ')}.`}</p>
<nav aria-label="Scores by state"><p>Show: ${filters.map((link, i) => html`${i === 0 ? '' : ' · '}${link}`)}</p></nav>
${rows.length === 0 ? html`<p class="empty">${none}</p>` : table}
${next === null ? '' : html`<p><a rel="next" href="${pageUrl(view.state, next)}">Older scores</a></p>`}`
}
