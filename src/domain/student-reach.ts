/** Which keys may use the student routes: the one rule both request paths apply before reading or writing a student. */
import { isAgreementActive } from './agreements.js'
import type { KeyRecord } from './api-key.js'
import { hasScope, type Scope } from './scopes.js'

/**
 * Whether `record` may use a student route needing `scope` at `now`: the scope, and an active
 * data-sharing agreement unless it is a sandbox test key (sandbox data is synthetic: no child's
 * data, so no agreement is needed to reach it).
 */
export function mayReachStudents(record: KeyRecord, scope: Scope, now: number): boolean {
  return hasScope(record.scopes, scope) && (record.sandbox || isAgreementActive(record.organisation.agreements, now))
}
