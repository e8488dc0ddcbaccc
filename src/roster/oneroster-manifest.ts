/**
 * manifest.csv of a OneRoster CSV export: two columns, propertyName and value, one property a
 * row. It gives the specification's version (`oneroster.version`, 1.1 or 1.2; `manifest.version`
 * is 1.0 in both) and, for each file, `file.<name>` = bulk (the file lists everything), delta
 * (the file lists changes, each row marked active or tobedeleted) or absent (no such file).
 * `source.systemCode` and `source.systemName` name the system the export came from: the import
 * keeps them, and never lets one source's export change another's schools.
 */
import { cell, readTable } from './roster-csv.js'
import { labelProblem } from './roster-fields.js'
import type { RosterFile } from './roster-files.js'
import type { ProblemList } from '../imports/problems.js'

export const MANIFEST = 'manifest.csv'

export type OneRosterVersion = '1.1' | '1.2'
export type FileMode = 'bulk' | 'delta' | 'absent'

/** The files this reader reads, by the manifest property that gives each one's mode. */
export type RosterFileName = 'orgs' | 'users' | 'roles'

/** The system an export came from, as its manifest names it; null where it does not. */
export interface RosterSource {
  systemCode: string | null
  systemName: string | null
}

export interface Manifest {
  version: OneRosterVersion
  source: RosterSource
  /** roles.csv only exists from 1.2 on; it is absent in 1.1. */
  modes: Record<RosterFileName, FileMode>
  /** The manifest line of each property read, for problems about how the modes fit together. */
  lines: Readonly<Record<string, number>>
}

const MODES: readonly FileMode[] = ['bulk', 'delta', 'absent']
/** A manifest is a few dozen rows; more is not a manifest. */
const MANIFEST_LIMITS = { maxRows: 1_000, maxRowChars: 4_096 }

export async function readManifest(file: RosterFile, problems: ProblemList): Promise<Manifest | null> {
  if (file.kind !== 'present') {
    const missing = 'is missing: a OneRoster CSV export holds a manifest.csv beside its other files'
    problems.add({ file: MANIFEST, message: file.message ?? missing })
    return null
  }
  const before = problems.count
  const properties = new Map<string, { value: string; line: number }>()
  const read = await readTable(
    MANIFEST,
    file.read(),
    { required: ['propertyName', 'value'], optional: [] },
    MANIFEST_LIMITS,
    problems,
    (row, columns) => {
      const name = cell(row, columns.propertyName).trim()
      const first = properties.get(name)
      if (first !== undefined)
        problems.add({
          file: MANIFEST,
          line: row.line,
          field: 'propertyName',
          message: `${name} is already given on line ${first.line}`,
        })
      else properties.set(name, { value: cell(row, columns.value).trim(), line: row.line })
      return true
    },
  )
  if (!read) return null

  const property = (name: string, allowed: readonly string[], hint: string): string | null => {
    const found = properties.get(name)
    if (found === undefined) {
      problems.add({ file: MANIFEST, message: `lacks the property ${name} (${hint})` })
      return null
    }
    if (!allowed.includes(found.value)) {
      problems.add({ file: MANIFEST, line: found.line, field: 'value', message: `${name} must be ${hint}` })
      return null
    }
    return found.value
  }
  property('manifest.version', ['1.0'], '1.0')
  const version = property('oneroster.version', ['1.1', '1.2'], '1.1 or 1.2') as OneRosterVersion | null
  const mode = (name: RosterFileName) => property(`file.${name}`, MODES, 'bulk, delta or absent') as FileMode | null
  const orgs = mode('orgs')
  const users = mode('users')
  const roles = version === '1.2' ? mode('roles') : 'absent'
  const named = (name: string): string | null => {
    const found = properties.get(name)
    if (found === undefined || found.value === '') return null
    const issue = labelProblem(found.value)
    if (issue !== null) problems.add({ file: MANIFEST, line: found.line, field: 'value', message: `${name} ${issue}` })
    return found.value
  }
  const source = { systemCode: named('source.systemCode'), systemName: named('source.systemName') }
  if (problems.count > before || version === null || orgs === null || users === null || roles === null) return null
  const lines: Record<string, number> = {}
  for (const [name, { line }] of properties) lines[name] = line
  return { version, source, modes: { orgs, users, roles }, lines }
}
