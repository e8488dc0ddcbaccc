/**
 * How an export's source system and districts are named to the operator, the same on the
 * command line and the dashboard.
 */
import type { RosterSource } from './oneroster-manifest.js'

/** "District SIS, code SIS-1", or null when the manifest names no source. */
export function sourceLabel(source: RosterSource): string | null {
  const parts = [source.systemName, source.systemCode === null ? null : `code ${source.systemCode}`]
  const named = parts.filter((part) => part !== null)
  return named.length === 0 ? null : named.join(', ')
}

/** "Springfield District (district-1), ..." */
export function districtsLabel(districts: readonly { sourcedId: string; name: string }[]): string {
  return districts.map((d) => (d.name === '' ? d.sourcedId : `${d.name} (${d.sourcedId})`)).join(', ')
}
