/**
 * The file `curriculum links add --file` shares: one student a row, named by id or by the id in
 * the district's system (external id), under the header `student` (CSV) or as `{"student": ...}`
 * (JSON Lines). All or nothing: every row that names no student, a sandbox student, or one named
 * on an earlier row is reported with its line, and nothing is shared.
 */
import fs from 'node:fs'
import type { Kysely } from 'kysely'
import type { Database } from '../../../storage/tables.js'
import { CliError, type InputProblem, plural } from '../../output.js'
import { fieldValue, type RecordFormat } from '../../../imports/records.js'
import { readListFile } from '../../list-file.js'

const FIELD = 'student'

/** What the file names, row by row, before anything is looked up. */
export interface StudentList {
  file: string
  rows: { line: number; ref: string }[]
  problems: InputProblem[]
}

/** Reads the file (without opening the database, so no transaction waits on the reading). */
export async function readStudentList(file: string, format: RecordFormat): Promise<StudentList> {
  if (!fs.existsSync(file) || !fs.statSync(file).isFile()) throw new CliError(`no file "${file}"`)
  const rows: { line: number; ref: string }[] = []
  const problems = await readListFile(
    file,
    format,
    'the file is empty; it starts with a header row: student',
    (item, problems) => {
      if (item.kind === 'header') {
        for (const name of item.fields)
          if (name !== FIELD) problems.push({ file, line: item.line, field: name, message: 'only student is accepted' })
        if (!item.fields.includes(FIELD))
          problems.push({
            file,
            line: item.line,
            message: 'the header has no student column; the file lists a student id or external id a row',
          })
        return
      }
      if (format === 'jsonl')
        for (const name of Object.keys(item.values))
          if (name !== FIELD) problems.push({ file, line: item.line, field: name, message: 'only student is accepted' })
      const value = fieldValue(item.values, FIELD)
      if (typeof value !== 'string' || value.trim() === '')
        problems.push({
          file,
          line: item.line,
          field: FIELD,
          message: `must be a student id or external id (got ${JSON.stringify(value ?? null)})`,
        })
      else rows.push({ line: item.line, ref: value.trim() })
    },
  )
  if (rows.length === 0 && problems.length === 0) problems.push({ file, line: 1, message: 'the file names no student' })
  return { file, rows, problems }
}

/**
 * The student ids the list names, in file order, each once; throws a CliError with every
 * problem, the file's own and those found looking the students up.
 */
export async function resolveStudentList(db: Kysely<Database>, list: StudentList): Promise<string[]> {
  const { file, rows } = list
  const problems = [...list.problems]
  const { studentsByReference } = await import('../../../storage/student-reference-repository.js')
  const found = await studentsByReference(
    db,
    rows.map((row) => row.ref),
  )
  const firstLine = new Map<string, number>()
  const ids: string[] = []
  for (const { line, ref } of rows) {
    const student = found.get(ref)
    if (student === undefined)
      problems.push({ file, line, field: FIELD, message: `no student has the id or external id "${ref}"` })
    else if (student.sandbox)
      problems.push({
        file,
        line,
        field: FIELD,
        message: `student ${student.id} is a sandbox (synthetic) student, which is never shared`,
      })
    else if (firstLine.has(student.id))
      problems.push({
        file,
        line,
        field: FIELD,
        message: `student ${student.id} is named already on line ${firstLine.get(student.id)}`,
      })
    else {
      firstLine.set(student.id, line)
      ids.push(student.id)
    }
  }
  if (problems.length > 0) {
    problems.sort((a, b) => a.line - b.line)
    throw new CliError(`${file}: ${plural(problems.length, 'problem')}; nothing was shared`, problems)
  }
  return ids
}
