/**
 * Times as the dashboard shows them: always UTC, and always saying so, since a partner in
 * another zone would otherwise read "20:15" as their own time.
 *
 * @example utcMinute('2026-11-23T20:15:42.120Z') // '2026-11-23 20:15 UTC'
 */
export function utcMinute(iso: string): string {
  return `${iso.slice(0, 16).replace('T', ' ')} UTC`
}

/** @example utcDay('2026-11-23T00:00:00.000Z') // '2026-11-23' */
export function utcDay(iso: string): string {
  return iso.slice(0, 10)
}

/**
 * A wait as a 429 page says it, and its Retry-After in whole seconds (RFC 9110 section 10.2.3).
 *
 * @example waitOf(42_300) // { seconds: 43, text: '43 seconds' }
 */
export function waitOf(ms: number): { seconds: number; text: string } {
  const seconds = Math.max(1, Math.ceil(ms / 1000))
  return { seconds, text: seconds < 90 ? `${seconds} seconds` : `${Math.ceil(seconds / 60)} minutes` }
}

/**
 * A time to the second, as the request log shows it (a table whose heading says UTC leaves the
 * suffix out).
 *
 * @example utcSecond(Date.parse('2026-11-23T20:15:42.120Z')) // '2026-11-23 20:15:42 UTC'
 */
export function utcSecond(ms: number, suffix = true): string {
  const text = new Date(ms).toISOString().slice(0, 19).replace('T', ' ')
  return suffix ? `${text} UTC` : text
}
