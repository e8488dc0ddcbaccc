/**
 * Adding a school by hand (a district's roster brings the others): its name and code checked,
 * a name another school has refused, and an operator's addition audited in its transaction.
 */
import { randomUUID } from 'node:crypto'
import type { Kysely } from 'kysely'
import { isoAt } from '../clock.js'
import { displayNameProblem } from '../domain/display-names.js'
import { ConflictError } from '../domain/errors.js'
import { insertSchoolRow, schoolIdNamed } from '../storage/school-repository.js'
import type { Database, SchoolRow } from '../storage/tables.js'
import { inTransaction } from '../storage/transaction.js'
import { auditOperator, type OperatorAudit } from './operator-action.js'

/** A school's own code (OneRoster `identifier`) is shorter than its name. */
const IDENTIFIER_MAX = 60

export interface NewSchool {
  name: string
  /** The school's own code, shown beside its name. */
  identifier?: string | null
}

/** What is wrong with a school by hand, by field (`name`, `identifier`), or an empty object. */
export function newSchoolProblems(school: NewSchool): Record<string, string> {
  const problems: Record<string, string> = {}
  const name = displayNameProblem(school.name.trim())
  if (name !== null) problems.name = `the name ${name}`
  const identifier = school.identifier?.trim() ?? ''
  const code = identifier === '' ? null : displayNameProblem(identifier, IDENTIFIER_MAX)
  if (code !== null) problems.identifier = `the identifier ${code}`
  return problems
}

/**
 * Creates a school by hand. Names are how people pick a school from a list, so a name another
 * school has is refused.
 */
export async function createSchool(
  db: Kysely<Database>,
  school: NewSchool,
  now: number,
  audit?: OperatorAudit,
): Promise<SchoolRow> {
  const problems = Object.values(newSchoolProblems(school))
  if (problems.length > 0) throw new ConflictError(problems.join('; '))
  const name = school.name.trim()
  const identifier = school.identifier?.trim() || null
  return inTransaction(db, async (trx) => {
    const existing = await schoolIdNamed(trx, name)
    if (existing !== undefined) throw new ConflictError(`a school named "${name}" exists already (${existing})`)
    const row: SchoolRow = {
      id: randomUUID(),
      name,
      external_id: null,
      identifier,
      created_at: isoAt(now),
      source: null,
      district_external_id: null,
    }
    await insertSchoolRow(trx, row)
    const detail = { name: row.name, identifier: row.identifier }
    await auditOperator(trx, audit, { action: 'schools.add', target: `school:${row.id}`, detail }, now)
    return row
  })
}
