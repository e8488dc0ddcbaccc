/**
 * The two kinds of operator (docs/accounts.md, "Operators"):
 *
 *   admin     everything on the operator pages, the operators themselves included
 *   operator  reviews, agreements, rosters and every other operator page, but not the operators
 */

export const OPERATOR_ROLES = ['admin', 'operator'] as const
export type OperatorRole = (typeof OPERATOR_ROLES)[number]

/** What each role may do, in the words the invitation mail and the Operators page use. */
export const OPERATOR_ROLE_SUMMARIES: Record<OperatorRole, string> = {
  admin: 'everything on the operator pages, including inviting, changing and removing operators',
  operator: 'reviews, agreements, rosters and every other operator page, but not the operators',
}

/** What the pages and mails call a role. */
export const OPERATOR_ROLE_NAMES: Record<OperatorRole, string> = { admin: 'operator admin', operator: 'operator' }

/** A role as a form or a command line gives it, or undefined for anything else. */
export function operatorRole(value: string): OperatorRole | undefined {
  return (OPERATOR_ROLES as readonly string[]).includes(value) ? (value as OperatorRole) : undefined
}
