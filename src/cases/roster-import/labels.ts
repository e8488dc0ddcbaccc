/**
 * How an export's source system, districts and the partner links it ends are named to the
 * operator, the same on the command line and the dashboard.
 */
import type { RosterSource } from '../../roster/oneroster-manifest.js'
import type { PartnerLinksEnding } from './counts.js'

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

/** All the links the partners lose. */
export function linksEnding(partners: readonly PartnerLinksEnding[]): number {
  return partners.reduce((total, partner) => total + partner.links, 0)
}

/** "Acme Learning 12, Beta Tutors 3" */
export function partnersLabel(partners: readonly PartnerLinksEnding[]): string {
  return partners.map((p) => `${p.name} ${p.links.toLocaleString('en-US')}`).join(', ')
}
