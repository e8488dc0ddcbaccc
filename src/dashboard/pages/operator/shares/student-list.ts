/**
 * The students a pasted list names: one id or external id a line, blank lines skipped, each
 * student once. Problems are told by line, as the CLI tells a file's, so the operator can fix
 * the list in the form it came back in.
 */
import type { Kysely } from 'kysely'
import { studentsByReference } from '../../../../storage/student-reference-repository.js'
import type { Database } from '../../../../storage/tables.js'

/** Problems shown at most; the count says how many more. */
const SHOWN = 10

export async function studentsOfList(
  db: Kysely<Database>,
  text: string,
): Promise<{ ids: string[]; problem: string | null }> {
  const rows = text
    .split(/\r\n|\n|\r/)
    .map((line, index) => ({ line: index + 1, ref: line.trim() }))
    .filter((row) => row.ref !== '')
  if (rows.length === 0) return { ids: [], problem: 'List at least one student id or external id, one a line.' }
  const found = await studentsByReference(
    db,
    rows.map((row) => row.ref),
  )
  const problems: string[] = []
  const ids = new Set<string>()
  for (const { line, ref } of rows) {
    const student = found.get(ref)
    if (student === undefined) problems.push(`line ${line}: no student has the id or external id “${ref}”`)
    else if (student.sandbox) problems.push(`line ${line}: ${ref} is a sandbox (made-up) student, never shared`)
    else ids.add(student.id)
  }
  if (problems.length === 0) return { ids: [...ids], problem: null }
  const more = problems.length > SHOWN ? `; and ${problems.length - SHOWN} more` : ''
  return { ids: [], problem: `Nothing was shared: ${problems.slice(0, SHOWN).join('; ')}${more}.` }
}
