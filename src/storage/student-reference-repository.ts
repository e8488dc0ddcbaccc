/**
 * Students named the way a district names them: by their id here, or by their id in the
 * district's system (`external_id`, the roster's sourcedId). A list of either, or both mixed, is
 * what an operator pastes or uploads to share students.
 */
import type { Kysely } from 'kysely'
import { UUID } from '../domain/uuid.js'
import type { Database } from './tables.js'

export interface ReferencedStudent {
  id: string
  sandbox: boolean
}

/** Rows per statement: under both engines' bound-parameter limits with room to spare. */
const CHUNK = 400

/**
 * The student each of `references` names (trimmed), by id first and then by external id; a
 * reference no student answers to is missing from the map.
 */
export async function studentsByReference(
  db: Kysely<Database>,
  references: readonly string[],
): Promise<Map<string, ReferencedStudent>> {
  const unique = [...new Set(references.map((ref) => ref.trim()).filter((ref) => ref !== ''))]
  const byId = new Map<string, ReferencedStudent>()
  const byExternalId = new Map<string, ReferencedStudent>()
  for (let i = 0; i < unique.length; i += CHUNK) {
    const part = unique.slice(i, i + CHUNK)
    const ids = part.filter((ref) => UUID.test(ref)).map((ref) => ref.toLowerCase())
    const rows = await db
      .selectFrom('students')
      .select(['id', 'external_id', 'sandbox'])
      .where((eb) =>
        ids.length === 0 ? eb('external_id', 'in', part) : eb.or([eb('id', 'in', ids), eb('external_id', 'in', part)]),
      )
      .execute()
    for (const row of rows) {
      const student = { id: row.id, sandbox: Number(row.sandbox) === 1 }
      byId.set(row.id, student)
      if (row.external_id !== null) byExternalId.set(row.external_id, student)
    }
  }
  const found = new Map<string, ReferencedStudent>()
  for (const ref of unique) {
    const student = (UUID.test(ref) ? byId.get(ref.toLowerCase()) : undefined) ?? byExternalId.get(ref)
    if (student !== undefined) found.set(ref, student)
  }
  return found
}

/** Ids per statement for the lookup by id alone. */
const ID_CHUNK = 500

/** Of `ids` (lower-case, each once), those of a stored student, each with whether it is a sandbox student. */
export async function sandboxFlags(db: Kysely<Database>, ids: readonly string[]): Promise<Map<string, boolean>> {
  const stored = new Map<string, boolean>()
  for (let i = 0; i < ids.length; i += ID_CHUNK)
    for (const row of await db
      .selectFrom('students')
      .select(['id', 'sandbox'])
      .where('id', 'in', ids.slice(i, i + ID_CHUNK))
      .execute())
      stored.set(row.id, Number(row.sandbox) === 1)
  return stored
}
