/**
 * What the service announces for its metrics, through node:diagnostics_channel: the modules that
 * do the work call these small functions, and metrics.ts subscribes when metrics are on. With no
 * subscriber each call is one property read, so code that announces costs nothing measurable
 * when metrics are off, and no module below the app needs to be handed a registry.
 *
 * Labels are chosen here, from closed sets (route templates, problem codes, actions), never from
 * what a request carried: a student id, a key or a name never reaches a channel.
 */
import diagnostics from 'node:diagnostics_channel'

/** One answered HTTP request, from either request path. */
export interface RequestEvent {
  /** The route template (`/api/v1/students/:id/progress`), or `unmatched`: never the raw URL. */
  readonly route: string
  readonly method: string
  readonly status: number
  readonly seconds: number
}

export const requestChannel = diagnostics.channel('curriculum.http.request')
export const refusalChannel = diagnostics.channel('curriculum.http.refusal')
export const disclosureChannel = diagnostics.channel('curriculum.disclosure.written')
export const batchChannel = diagnostics.channel('curriculum.storage.group-commit')
export const deliveryChannel = diagnostics.channel('curriculum.webhook.delivery')

/** Whether anyone counts requests: the paths read the clock for it only then. */
export function requestsObserved(): boolean {
  return requestChannel.hasSubscribers
}

/**
 * The one function both request paths call once per answer they write.
 * @example recordRequest('/api/v1/tiers', 'GET', 200, performance.now() - started)
 */
export function recordRequest(route: string, method: string, status: number, elapsedMs: number): void {
  if (!requestChannel.hasSubscribers) return
  const event: RequestEvent = { route, method, status, seconds: elapsedMs / 1000 }
  requestChannel.publish(event)
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
