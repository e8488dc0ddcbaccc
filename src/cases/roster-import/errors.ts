/** Why a roster import wrote nothing (import.ts). */
import type { ImportProblem } from '../../imports/problems.js'

/** The export has problems (or gained some since its preview): nothing was written. */
export class RosterImportRefused extends Error {
  override name = 'RosterImportRefused'
  constructor(
    readonly problems: readonly ImportProblem[],
    readonly moreProblems: number,
  ) {
    super(`the roster has ${(problems.length + moreProblems).toLocaleString('en-US')} problem(s); nothing was imported`)
  }
}

/** The delta would erase students and the caller did not confirm it: nothing was written. */
export class ErasureNotConfirmed extends Error {
  override name = 'ErasureNotConfirmed'
  constructor(readonly students: number) {
    super(`the delta would erase ${students.toLocaleString('en-US')} student(s); confirm the erasure to import it`)
  }
}
