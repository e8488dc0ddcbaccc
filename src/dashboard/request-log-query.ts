/**
 * The request log pages' query string (partner and operator): the request id to find, the filters
 * and the page cursor. A value that cannot be used is left out with a message, so the page still
 * shows what the rest asks for.
 */
import type { RequestLogQuery } from '../cases/request-log.js'
import { UUID } from '../domain/uuid.js'
import { PROBLEM_CODES } from '../errors.js'

export const STATUS_CLASSES = ['2xx', '3xx', '4xx', '5xx'] as const
/** What the log records as the route of a request that matched none. */
export const UNMATCHED_ROUTE = 'unmatched'

export interface ParsedRequestLogQuery {
  query: RequestLogQuery
  /** The request id to find, lower-case. */
  requestId: string | undefined
  /** What was asked for, trimmed, to fill the forms in again. */
  values: Record<string, string>
  /** Why a value was left out, in words for the page. */
  problems: string[]
}

const NAMES = ['request', 'key', 'status', 'problem', 'route', 'organisation'] as const

/** `routes`: the route templates a filter may name. */
export function requestLogQuery(raw: Record<string, unknown>, routes: readonly string[]): ParsedRequestLogQuery {
  const values: Record<string, string> = {}
  for (const name of NAMES) values[name] = typeof raw[name] === 'string' ? raw[name].trim() : ''
  const query: RequestLogQuery = {}
  const problems: string[] = []
  let requestId: string | undefined
  if (values.request) {
    if (UUID.test(values.request)) requestId = values.request.toLowerCase()
    else problems.push('A request id is a UUID, as a problem’s "requestId" or the X-Request-Id header gives it.')
  }
  if (values.key) {
    if (UUID.test(values.key)) query.keyId = values.key.toLowerCase()
    else problems.push('Choose a key from the list.')
  }
  if (values.status) {
    const index = (STATUS_CLASSES as readonly string[]).indexOf(values.status)
    if (index >= 0) query.statusClass = index + 2
    else problems.push('Choose a status class from the list.')
  }
  if (values.problem) {
    if ((PROBLEM_CODES as readonly string[]).includes(values.problem)) query.problem = values.problem
    else problems.push('Choose a problem code from the list.')
  }
  if (values.route) {
    if (values.route === UNMATCHED_ROUTE || routes.includes(values.route)) query.route = values.route
    else problems.push('Choose a route from the list.')
  }
  if (values.organisation) {
    if (UUID.test(values.organisation)) query.organisationId = values.organisation.toLowerCase()
    else problems.push('Choose an organisation from the list.')
  }
  if (typeof raw.before === 'string' && /^\d{1,15}\.([0-9a-f-]{36}|~)$/.test(raw.before)) query.before = raw.before
  return { query, requestId, values, problems }
}
