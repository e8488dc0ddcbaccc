/**
 * What a roster import is asked to do and what it counts (import.ts, run.ts).
 */
import type { TierId } from '../../domain/tiers.js'

export interface RosterImportOptions {
  now: number
  /** The tier of new students; the first tier (explorer) when not given. Known students keep theirs. */
  tier?: TierId
  /** Erase the students a delta marks tobedeleted; without it an apply that would erase refuses. */
  confirmErase?: boolean
  /**
   * `one-transaction` (the default): every change or none. `batches`: each batch of students
   * commits on its own, for SQLite, where an open transaction holds the only write lock (see
   * import.ts).
   */
  commit?: 'one-transaction' | 'batches'
  /** Awaited after each batch of students: lets a server answer requests meanwhile. */
  pause?: () => Promise<void>
  /** Students gone through so far, of `total`, in the current phase. */
  progress?: (phase: 'students' | 'attendance', done: number, total: number) => void
}

export interface RosterCounts {
  students: {
    new: number
    /** Known students whose first name or schools change. */
    changed: number
    renamed: number
    changedSchools: number
    unchanged: number
    /**
     * Bulk users file: kept students that the file lacks and that attend a school it lists; they
     * leave the schools it lists.
     */
    noLongerPresent: number
    /** Of those, the ones that attend no other school afterwards. */
    leavingAllSchools: number
    /** Delta: tobedeleted students the service keeps, to be erased. */
    toErase: number
    /** Delta: tobedeleted users the service never kept: nothing to do. */
    removalsNotKept: number
    /**
     * Students the export lists whom another source system listed first (a transfer): their
     * schools here follow this export, their first name that source.
     */
    keptByAnotherSource: number
  }
  schools: { new: number; changed: number; unchanged: number; leaving: number }
  /** Student-school pairs made and ended. */
  attendance: { joining: number; leaving: number }
}

export function emptyCounts(): RosterCounts {
  return {
    students: {
      new: 0,
      changed: 0,
      renamed: 0,
      changedSchools: 0,
      unchanged: 0,
      noLongerPresent: 0,
      leavingAllSchools: 0,
      toErase: 0,
      removalsNotKept: 0,
      keptByAnotherSource: 0,
    },
    schools: { new: 0, changed: 0, unchanged: 0, leaving: 0 },
    attendance: { joining: 0, leaving: 0 },
  }
}

/** A school an export speaks for, and how many of its students join and leave it. */
export interface SchoolCoverage {
  sourcedId: string
  name: string
  joining: number
  leaving: number
  /** A delta's tobedeleted school: every student leaves it; the school stays. */
  removed: boolean
  /**
   * Listed by a bulk export none of whose students attends it: the export does not speak for its
   * students, who stay as they are (a region's export may list every school of the district).
   */
  withoutStudents: boolean
}

/** Links to one partner organisation that the import ends (or, in a preview, would end). */
export interface PartnerLinksEnding {
  organisationId: string
  name: string
  links: number
}

/**
 * What a preview found to change: the export's students (by sourcedId) that are new or change,
 * and the kept students a bulk file lacks that still attend a school (by id). An import then
 * reads and writes only these inside its transaction.
 */
export interface Touched {
  students: Set<string>
  absent: Set<string>
}
