/**
 * When an organisation's data must go (the disposition rule of agreement-terms.ts): once none of
 * its agreements is in force, the one that stopped applying last is the agreement the partner
 * held the data under, and its disposition period, counted from that end, is the partner's time
 * to delete. A newer agreement in force means the data is still shared on purpose: nothing ends.
 */
import { type AgreementDates, agreementEndsAt, deletionDueAt } from './agreement-terms.js'
import { agreementWindow, isAgreementActive } from './agreements.js'

export interface DisposableAgreement extends AgreementDates {
  id: string
  dispositionDays: number
}

export interface AgreementEnd<T extends DisposableAgreement> {
  agreement: T
  /** When it stopped applying: the earlier of its expiry and its end. */
  endedAt: string
  /** `endedAt` plus its disposition period. */
  deletionDueAt: string
}

/**
 * The end the organisation holding `agreements` is in at `now`, or undefined while one of them is
 * in force or none has ended. An agreement ended before it took effect never applied, and is
 * passed over; between two ended the same instant, the one signed last.
 */
export function currentEnd<T extends DisposableAgreement>(
  agreements: readonly T[],
  now: number,
): AgreementEnd<T> | undefined {
  const windows = agreements.map((a) => agreementWindow(a.signedAt, a.expiresAt, a.endedAt))
  if (isAgreementActive(windows, now)) return undefined
  let chosen: AgreementEnd<T> | undefined
  for (const agreement of agreements) {
    const endedAt = agreementEndsAt(agreement)
    if (endedAt === null || Date.parse(endedAt) > now || Date.parse(endedAt) <= Date.parse(agreement.signedAt)) continue
    const later =
      chosen === undefined ||
      endedAt > chosen.endedAt ||
      (endedAt === chosen.endedAt && agreement.signedAt > chosen.agreement.signedAt)
    if (later) chosen = { agreement, endedAt, deletionDueAt: deletionDueAt(agreement, agreement.dispositionDays)! }
  }
  return chosen
}

/** Whether the disposition period of `end` has run out at `now`: the links end then. */
export function isDispositionDue(end: { deletionDueAt: string }, now: number): boolean {
  return Date.parse(end.deletionDueAt) <= now
}

/**
 * Since when the end at `endedAt` covers the students shared with the organisation: the start of
 * the first of its agreements that applied after its previous disposition (`previousUnlinkedAt`,
 * null when it had none). An agreement followed by another before its links ended handed its
 * data on, so the later end covers both; a disposition already asked for everything before it.
 */
export function coverageSince(
  agreements: readonly AgreementDates[],
  endedAt: string,
  previousUnlinkedAt: string | null,
): string {
  const after = previousUnlinkedAt === null ? Number.NEGATIVE_INFINITY : Date.parse(previousUnlinkedAt) + 1
  let since = Date.parse(endedAt)
  for (const agreement of agreements) {
    const ends = agreementEndsAt(agreement)
    if (agreement.signedAt > endedAt || (ends !== null && Date.parse(ends) < after)) continue
    since = Math.min(since, Date.parse(agreement.signedAt))
  }
  return new Date(Math.max(since, after)).toISOString()
}
