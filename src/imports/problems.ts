/**
 * Problems found in an imported file (such as a roster export's), each located at
 * `file:line: field` so that an operator can open the file at the row. Messages never quote a
 * personal field: they name the column and say what is wrong, since the value itself may be a
 * full name, an e-mail address or a birth date.
 */

export interface ImportProblem {
  /** The file, such as a roster export's "users.csv", or the export itself for a problem with the whole. */
  file: string
  /** Physical line (from 1), absent for a problem with a whole file. */
  line?: number
  field?: string
  message: string
}

export function formatImportProblem(problem: ImportProblem): string {
  const place = problem.line === undefined ? problem.file : `${problem.file}:${problem.line}`
  return problem.field === undefined ? `${place}: ${problem.message}` : `${place}: ${problem.field}: ${problem.message}`
}

/** Collects problems up to a cap and counts the rest, so a file of a million bad rows stays small. */
export class ProblemList {
  readonly list: ImportProblem[] = []
  more = 0

  constructor(readonly cap: number) {}

  add(problem: ImportProblem): void {
    if (this.list.length < this.cap) this.list.push(problem)
    else this.more++
  }

  get count(): number {
    return this.list.length + this.more
  }
}
