/**
 * Rolling a key (Stripe's model): a new key takes the old one's name, scopes and organisation,
 * and the old one keeps working until the end of an overlap the partner chooses, so the new key
 * can be deployed before the old one stops. "Now" is the leaked-key case: the old key is revoked
 * at once.
 */
const HOUR_MS = 3_600_000

/** The overlaps the dashboard and the CLI offer, by the name they take. */
export const ROLL_OVERLAPS = {
  now: 0,
  '1h': HOUR_MS,
  '24h': 24 * HOUR_MS,
  '7d': 7 * 24 * HOUR_MS,
} as const

export type RollOverlap = keyof typeof ROLL_OVERLAPS

/** The latest end a chosen date may set: an old key should not outlive its replacement for long. */
export const MAX_ROLL_OVERLAP_MS = 30 * 24 * HOUR_MS

export function isRollOverlap(value: string): value is RollOverlap {
  return Object.hasOwn(ROLL_OVERLAPS, value)
}

/**
 * When the old key stops, for a named overlap or an ISO date (a bare date means its midnight
 * UTC); a reason a person can act on when the date cannot be an end.
 */
export function rollEnd(choice: string, now: number): { end: number } | { refused: string } {
  if (isRollOverlap(choice)) return { end: now + ROLL_OVERLAPS[choice] }
  const end = Date.parse(/^\d{4}-\d{2}-\d{2}$/.test(choice) ? `${choice}T00:00:00.000Z` : choice)
  if (Number.isNaN(end))
    return { refused: `"${choice}" is neither an overlap (now, 1h, 24h, 7d) nor a date such as 2026-12-31.` }
  if (end <= now) return { refused: 'The old key must stop in the future; choose "now" to stop it at once.' }
  if (end - now > MAX_ROLL_OVERLAP_MS)
    return { refused: 'The old key may keep working for 30 days at most; choose an earlier end.' }
  return { end }
}
