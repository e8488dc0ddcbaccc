/** The disclosure log's filter, read from the query string of its page and of its CSV export. */
import { UUID } from '../../../../domain/uuid.js'
import { DISCLOSURE_ACTIONS, type DisclosureAction, type DisclosureFilter } from '../../../../storage/disclosure-log.js'

export interface ParsedFilter {
  filter: DisclosureFilter
  /** What was asked for, trimmed, to fill the form in again. */
  values: Record<string, string>
  /** Why a value was ignored, in words for the page. */
  problems: string[]
  /** The page cursor: records older than this one. */
  before: number | undefined
}

/** Bad values are ignored with a message, so the page still shows what the rest asks for. */
export function disclosureFilter(query: Record<string, unknown>): ParsedFilter {
  const values: Record<string, string> = {}
  for (const name of ['student', 'organisation', 'school', 'key', 'action', 'since', 'until']) {
    const value = query[name]
    values[name] = typeof value === 'string' ? value.trim() : ''
  }
  const filter: DisclosureFilter = {}
  const problems: string[] = []
  const cursor = typeof query.before === 'string' && /^\d{1,15}$/.test(query.before) ? Number(query.before) : undefined
  if (values.student)
    UUID.test(values.student.toLowerCase())
      ? (filter.studentId = values.student.toLowerCase())
      : problems.push('The student must be a UUID.')
  if (values.organisation)
    UUID.test(values.organisation)
      ? (filter.organisationId = values.organisation)
      : problems.push('Choose an organisation from the list.')
  if (values.school)
    UUID.test(values.school) ? (filter.schoolId = values.school) : problems.push('Choose a school from the list.')
  if (values.key)
    UUID.test(values.key)
      ? (filter.keyId = values.key)
      : problems.push('The key must be a key id (a UUID, as the keys table shows on the organisation page).')
  if (values.action)
    (DISCLOSURE_ACTIONS as readonly string[]).includes(values.action)
      ? (filter.action = values.action as DisclosureAction)
      : problems.push('Unknown action.')
  for (const [name, bound] of [
    ['since', 'since'],
    ['until', 'until'],
  ] as const) {
    if (!values[name]) continue
    const at = Date.parse(`${values[name]}T00:00:00.000Z`)
    if (Number.isNaN(at)) problems.push(`The ${name} date must be a date.`)
    else filter[bound] = name === 'until' ? at + 86_400_000 : at
  }
  return { filter, values, problems, before: cursor }
}
