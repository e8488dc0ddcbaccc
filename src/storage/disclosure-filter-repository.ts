/**
 * Which rows of the disclosure log a page, a report or an export asks for, as one condition and
 * one lookup: the log's pages (disclosure-log.ts) and its batches (disclosure-batch-repository.ts) read
 * with the same filter, so the two can never disagree about a row.
 */
import type { Expression, ExpressionBuilder, SqlBool } from 'kysely'
import { isoAt } from '../clock.js'
import { ofSchool } from './school-student-repository.js'
import type { DisclosureAction, DisclosureOutcome } from '../domain/disclosure.js'
import type { Database, DisclosureDimension, DisclosuresTable } from './tables.js'

export interface DisclosureFilter {
  studentId?: string
  organisationId?: string
  /** Only the students of this school: attending now, or when erased (school-student-repository.ts). */
  schoolId?: string
  keyId?: string
  action?: DisclosureAction
  outcome?: DisclosureOutcome
  /** Inclusive lower bound, epoch ms. */
  since?: number
  /** Exclusive upper bound, epoch ms. */
  until?: number
}

/** The filter, and a page's bound (ids below `before`), as one condition on the log's rows (aliased `d`). */
export function disclosureMatch(filter: DisclosureFilter, before?: number) {
  return (eb: ExpressionBuilder<Database & { d: DisclosuresTable }, 'd'>) => {
    const all: Expression<SqlBool>[] = []
    if (before !== undefined) all.push(eb('d.id', '<', before))
    if (filter.studentId !== undefined) all.push(eb('d.student_id', '=', filter.studentId))
    if (filter.organisationId !== undefined) all.push(eb('d.organisation_id', '=', filter.organisationId))
    if (filter.schoolId !== undefined) all.push(ofSchool(eb, filter.schoolId))
    if (filter.keyId !== undefined) all.push(eb('d.key_id', '=', filter.keyId))
    if (filter.action !== undefined) all.push(eb('d.action', '=', filter.action))
    if (filter.outcome !== undefined) all.push(eb('d.outcome', '=', filter.outcome))
    if (filter.since !== undefined) all.push(eb('d.at', '>=', isoAt(filter.since)))
    if (filter.until !== undefined) all.push(eb('d.at', '<', isoAt(filter.until)))
    return eb.and(all)
  }
}

/**
 * The most selective lookup the filter allows for sealed segments: a student has fewer rows than
 * a key, a key than an organisation.
 */
export function disclosureLookup(
  filter: DisclosureFilter,
): { dimension: DisclosureDimension; value: string } | undefined {
  if (filter.studentId !== undefined) return { dimension: 's', value: filter.studentId }
  if (filter.keyId !== undefined) return { dimension: 'k', value: filter.keyId }
  if (filter.organisationId !== undefined) return { dimension: 'o', value: filter.organisationId }
  return undefined
}
