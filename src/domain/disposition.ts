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

/**
 * Whose deadline applies to an agreement's data, as the partner is told: `governs`, the end the
 * organisation is in (its deadline applies to everything its list covers); `disposed`, its links
 * ended and its deadline was the one that applied; `handed_on`, it ended while `to` was in force
 * or was recorded before its deadline, so its data went on being shared under `to` and the later
 * end's deadline applies instead of its own; `none`, in force, still to start or never applied.
 */
export type DeadlineRole = { role: 'governs' | 'disposed' | 'none' } | { role: 'handed_on'; to: string }

export function deadlineRoles<T extends DisposableAgreement>(
  agreements: readonly T[],
  disposedIds: ReadonlySet<string>,
  now: number,
): Map<string, DeadlineRole> {
  const current = currentEnd(agreements, now)
  const roles = new Map<string, DeadlineRole>()
  for (const a of agreements) {
    const endedAt = agreementEndsAt(a)
    if (disposedIds.has(a.id)) roles.set(a.id, { role: 'disposed' })
    else if (current?.agreement.id === a.id) roles.set(a.id, { role: 'governs' })
    else if (endedAt === null || Date.parse(endedAt) > now || endedAt <= a.signedAt) roles.set(a.id, { role: 'none' })
    else {
      const due = deletionDueAt(a, a.dispositionDays)!
      // The first agreement recorded before this one's deadline that went on applying after its end.
      const successor = agreements
        .filter((b) => {
          const bEndsAt = agreementEndsAt(b)
          return b.id !== a.id && b.signedAt < due && (bEndsAt === null || bEndsAt > endedAt)
        })
        .sort((x, y) => (x.signedAt < y.signedAt ? -1 : x.signedAt > y.signedAt ? 1 : 0))[0]
      roles.set(a.id, successor === undefined ? { role: 'none' } : { role: 'handed_on', to: successor.id })
    }
  }
  return roles
}
