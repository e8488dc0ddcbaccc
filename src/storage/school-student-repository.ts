/**
 * Whom the disclosure log's filter by school means: the students who attend the school now, and
 * the erased students who attended it when they were erased (migration 0015). An erased child's
 * rows are kept so the district can answer for them, and the district asks by school.
 */
import type { Expression, ExpressionBuilder, SqlBool } from 'kysely'
import type { Database, DisclosuresTable } from './tables.js'

/** The condition on the log's rows (aliased `d`) that their student is one of `schoolId`'s. */
export function ofSchool(
  eb: ExpressionBuilder<Database & { d: DisclosuresTable }, 'd'>,
  schoolId: string,
): Expression<SqlBool> {
  return eb(
    'd.student_id',
    'in',
    eb
      .selectFrom('student_schools')
      .select('student_id')
      .where('school_id', '=', schoolId)
      .union(eb.selectFrom('erased_student_schools').select('student_id').where('school_id', '=', schoolId)),
  )
}
