/**
 * A rolled key's answers say so: `Deprecation` (RFC 9745, a Structured Field Date: `@` and Unix
 * seconds) names when it was rolled, and `Sunset` (RFC 8594, an HTTP-date) when it stops, so the
 * logs of whichever server still sends it show that it must move to the new key. The router
 * (access-control.ts) and the fast path (fast/replies.ts) both add them here.
 */
import type { KeyRecord } from '../domain/api-key.js'
import { deprecationField, sunsetField } from '../domain/deprecation.js'

/** Adds the fields to `into` when `key` was rolled; nothing for any other key. */
export function addKeySunset(key: KeyRecord | undefined, into: Record<string, string>): void {
  if (key === undefined || key.rolledAt === null || key.expiresAt === null) return
  into.deprecation = deprecationField(new Date(key.rolledAt))
  into.sunset = sunsetField(new Date(key.expiresAt))
}
