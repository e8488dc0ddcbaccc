/** How the partner's forms name each scope: on the access application and on the key forms. */
import type { Scope } from '../../../domain/scopes.js'

export const SCOPE_LABELS: Record<Scope, string> = {
  'students:read': 'Student read: a student’s progress (students:read)',
  'students:write': 'Student write: set a student’s tier (students:write)',
}
