/**
 * Reading a student's progress, for both request paths: the student as the key's organisation
 * sees them, and the disclosure record of the read (`disclosed` or `not_found`), committed
 * before anything is returned.
 */
import type { Kysely } from 'kysely'
import { recordDisclosure } from '../storage/disclosure-log.js'
import {
  findStudentRows,
  progressOfRows,
  type StudentAccess,
  type StudentProgress,
  type StudentRows,
  type SyncReader,
} from '../storage/student-repository.js'
import type { Database } from '../storage/tables.js'
import type { WriteQueue } from '../storage/write-queue.js'

/**
 * The student and their progress rows, or undefined when the student is not linked to the
 * organisation (whether or not the id exists: the caller cannot tell). Resolves only once the
 * disclosure record is committed.
 */
export async function readStudentRows(
  db: Kysely<Database>,
  writes: WriteQueue,
  studentId: string,
  context: StudentAccess,
  reader?: SyncReader,
): Promise<StudentRows | undefined> {
  const student = await findStudentRows(db, reader, studentId, context)
  await writes.statement((trx) =>
    recordDisclosure(trx, context, studentId, 'progress.read', student === undefined ? 'not_found' : 'disclosed'),
  )
  return student
}

/** As `readStudentRows`, with the rows as progress entries. */
export async function readStudentProgress(
  db: Kysely<Database>,
  writes: WriteQueue,
  studentId: string,
  context: StudentAccess,
  reader?: SyncReader,
): Promise<StudentProgress | undefined> {
  const student = await readStudentRows(db, writes, studentId, context, reader)
  return student === undefined ? undefined : progressOfRows(studentId, student)
}
