/**
 * A data-sharing agreement is active from its signing date until it expires or is ended,
 * whichever comes first. Student endpoints need one active agreement on the key's organisation.
 */
export interface AgreementWindow {
  /** Epoch ms the agreement took effect (its signing date). */
  readonly from: number
  /** Epoch ms it stops being active (earliest of expiry and end), or null if open-ended. */
  readonly until: number | null
}

export function isAgreementActive(windows: readonly AgreementWindow[], now: number): boolean {
  for (const window of windows) {
    if (window.from <= now && (window.until === null || now < window.until)) return true
  }
  return false
}

export function agreementWindow(signedAt: string, expiresAt: string | null, endedAt: string | null): AgreementWindow {
  const ends = [expiresAt, endedAt].filter((value): value is string => value !== null).map((value) => Date.parse(value))
  return { from: Date.parse(signedAt), until: ends.length === 0 ? null : Math.min(...ends) }
}

export type AgreementState = 'active' | 'pending' | 'expired' | 'ended'

/**
 * An agreement's state at `now`, the one rule the CLI and the dashboard both show: ended and
 * expired win over active; pending means signed with a date still to come. (Active here is the
 * same test as `isAgreementActive` on its window.)
 */
export function agreementState(
  dates: { signedAt: string; expiresAt: string | null; endedAt: string | null },
  now: number,
): AgreementState {
  if (dates.endedAt !== null && Date.parse(dates.endedAt) <= now) return 'ended'
  if (dates.expiresAt !== null && Date.parse(dates.expiresAt) <= now) return 'expired'
  if (Date.parse(dates.signedAt) > now) return 'pending'
  return 'active'
}
