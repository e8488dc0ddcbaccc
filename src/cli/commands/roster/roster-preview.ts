/**
 * A roster import's preview and outcome as lines for the operator (`curriculum roster import`).
 * Counts and ids only: nothing of a child but what the service keeps is ever at hand here.
 */
import type { RosterCounts, RosterCoverage, RosterPreview } from '../../../cases/roster-import/import.js'
import { KEPT_FIELDS, NEVER_KEPT } from '../../../cases/roster-import/kept.js'
import { districtsLabel, linksEnding, partnersLabel, sourceLabel } from '../../../cases/roster-import/labels.js'
import { plural } from '../../output.js'

/** The counts, then what a bulk file's absent students and a delta's removals come to. */
export function countLines(counts: RosterCounts): string[] {
  const { students, schools, attendance } = counts
  const lines = [
    `students: ${students.new.toLocaleString('en-US')} new, ${students.changed.toLocaleString('en-US')} changed ` +
      `(${students.renamed.toLocaleString('en-US')} first name, ${students.changedSchools.toLocaleString('en-US')} ` +
      `schools), ${students.unchanged.toLocaleString('en-US')} unchanged, ` +
      `${students.noLongerPresent.toLocaleString('en-US')} no longer present`,
    `schools: ${schools.new.toLocaleString('en-US')} new, ${schools.changed.toLocaleString('en-US')} changed, ` +
      `${schools.unchanged.toLocaleString('en-US')} unchanged, ${schools.leaving.toLocaleString('en-US')} removed ` +
      '(their students leave them; the schools stay)',
    `attendance: ${plural(attendance.joining, 'student joins', 'students join')} a school, ` +
      `${plural(attendance.leaving, 'student leaves', 'students leave')} one`,
  ]
  if (students.noLongerPresent > 0)
    lines.push(
      `${plural(students.noLongerPresent, 'student')} of these schools the users file lacks: kept, and leaving ` +
        `the schools it lists (${students.leavingAllSchools.toLocaleString('en-US')} then attend no school); ` +
        'to erase them, list their ids and run `curriculum students erase --file <ids.csv>`',
    )
  if (students.keptByAnotherSource > 0)
    lines.push(
      `${plural(students.keptByAnotherSource, 'student')} another source system listed first (a transfer, or ` +
        'schools of two districts): their schools here follow this export, their first name that source',
    )
  if (students.toErase > 0 || students.removalsNotKept > 0)
    lines.push(
      `to erase (tobedeleted in the delta): ${plural(students.toErase, 'student')}` +
        (students.removalsNotKept > 0
          ? `; ${plural(students.removalsNotKept, 'other user')} marked tobedeleted never kept here`
          : ''),
    )
  return lines
}

/**
 * What the export speaks for: its source, its districts, each school with who joins and leaves,
 * and the links each partner loses.
 */
function coverageLines(coverage: RosterCoverage): string[] {
  const { source, districts, schools, partners } = coverage
  const named = sourceLabel(source)
  const lines = [
    named === null
      ? 'source system: not named by manifest.csv (source.systemCode, source.systemName)'
      : `source system: ${named}`,
  ]
  if (districts.length > 0) lines.push(`district: ${districtsLabel(districts)}`)
  const total = schools.length.toLocaleString('en-US')
  lines.push(`schools this export speaks for (${total}; students of other schools are not touched):`)
  for (const school of schools)
    lines.push(
      `  ${school.name} (${school.sourcedId}): ${plural(school.joining, 'student joins', 'students join')}, ` +
        plural(school.leaving, 'student leaves', 'students leave') +
        (school.removed ? ' (removed by the delta)' : '') +
        (school.withoutStudents ? ' (listed without students: its students are left as they are)' : ''),
    )
  lines.push(
    partners.length === 0
      ? 'partner links ending: none'
      : `partner links ending: ${partnersLabel(partners)} ` +
          '(each partner is told to delete what it holds of those students)',
  )
  return lines
}

export function previewLines(preview: RosterPreview): string[] {
  return [
    `OneRoster ${preview.version} ${preview.kind} export; new students get the tier ${preview.tier}`,
    ...coverageLines(preview.coverage),
    ...countLines(preview),
    `${KEPT_FIELDS} ${NEVER_KEPT}`,
  ]
}

/** Whether importing ends anything: a student leaving a school (and the links a school share held), or an erasure. */
export function endsAccess(counts: RosterCounts): boolean {
  return counts.attendance.leaving > 0 || counts.students.toErase > 0
}

/** What the import ends, in one line, for the question before it writes. */
export function endingLine(preview: RosterPreview): string {
  const { attendance, students, coverage } = preview
  const links = linksEnding(coverage.partners)
  const parts = [
    ...(attendance.leaving > 0
      ? [
          `${plural(attendance.leaving, 'student leaves', 'students leave')} a school, ending ` +
            (links === 0
              ? 'no partner link'
              : `${plural(links, 'partner link')} (${partnersLabel(coverage.partners)})`),
        ]
      : []),
    ...(students.toErase > 0 ? [`${plural(students.toErase, 'student')} erased for good`] : []),
  ]
  return `this import ends: ${parts.join('; ')}`
}
