/**
 * The one HTML escaper, for the reference pages, the dashboard and mail alike: text (anything, as its
 * string form) made safe in element content and in quoted attribute values.
 */
const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' }

export function escapeHtml(text: unknown): string {
  return String(text).replace(/[&<>"']/g, (c) => ESCAPES[c]!)
}
