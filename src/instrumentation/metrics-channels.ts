/**
 * What the service announces for its metrics: the modules that do the work call these small
 * functions, and metrics.ts listens when metrics are on. Everything but answered requests goes
 * through node:diagnostics_channel, where a call with no subscriber is one property read, so no
 * module below the app needs to be handed a registry. Answered requests, the one announcement made
 * on every request, go to a plain list of recorders instead, with no event object and no channel
 * between (docs/performance.md, "Metrics").
 *
 * Labels are chosen here, from closed sets (route templates, problem codes, actions), never from
 * what a request carried: a student id, a key or a name never reaches a channel.
 */
import diagnostics from 'node:diagnostics_channel'

/**
 * Counts one answered HTTP request: its route template (`/api/v1/students/:id/progress`, or
 * `unmatched`: never the raw URL), method, status and seconds taken.
 */
export type RequestRecorder = (route: string, method: string, status: number, seconds: number) => void

const requestRecorders: RequestRecorder[] = []

export const refusalChannel = diagnostics.channel('curriculum.http.refusal')
export const disclosureChannel = diagnostics.channel('curriculum.disclosure.written')
export const batchChannel = diagnostics.channel('curriculum.storage.group-commit')
export const deliveryChannel = diagnostics.channel('curriculum.webhook.delivery')

/** Adds a recorder of answered requests; returns the function that removes it. */
export function observeRequests(recorder: RequestRecorder): () => void {
  requestRecorders.push(recorder)
  return () => {
    const index = requestRecorders.indexOf(recorder)
    if (index >= 0) requestRecorders.splice(index, 1)
  }
}

/** Whether anyone counts requests: the paths read the clock for it only then. */
export function requestsObserved(): boolean {
  return requestRecorders.length > 0
}

/**
 * The one function both request paths call once per answer they write.
 * @example recordRequest('/api/v1/tiers', 'GET', 200, performance.now() - started)
 */
export function recordRequest(route: string, method: string, status: number, elapsedMs: number): void {
  const seconds = elapsedMs / 1000
  for (let i = 0; i < requestRecorders.length; i++) requestRecorders[i]!(route, method, status, seconds)
}

/** A problem answer; only refusals (401, 403, 404, 429) are counted, by their code. */
export function recordProblem(code: string, status: number): void {
  if (refusalChannel.hasSubscribers && (status === 401 || status === 403 || status === 404 || status === 429))
    refusalChannel.publish(code)
}

/** Disclosure rows written (or that failed to be) for one action. */
export interface DisclosureEvent {
  readonly action: string
  readonly outcome: string
  readonly rows: number
}

export function recordDisclosures(action: string, outcome: string, rows: number): void {
  if (disclosureChannel.hasSubscribers) disclosureChannel.publish({ action, outcome, rows } satisfies DisclosureEvent)
}

/** Units that shared one SQLite commit. */
export function recordBatch(units: number): void {
  if (batchChannel.hasSubscribers) batchChannel.publish(units)
}

/** One webhook delivery attempt's outcome (`delivered`, `failed`, ...). */
export function recordDelivery(outcome: string): void {
  if (deliveryChannel.hasSubscribers) deliveryChannel.publish(outcome)
}
