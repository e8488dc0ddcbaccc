/** Route options that give a page to one kind of account; dashboard-plugin.ts checks them before the handler runs. */
import type { MemberAction } from '../domain/member-roles.js'

declare module 'fastify' {
  interface FastifyContextConfig {
    /** What a member of the partner's current organisation must be allowed (pages/partner/index.ts checks it). */
    member?: MemberAction
    /** An operator page for operator admins only (pages/operator/index.ts checks it). */
    operatorAdmin?: true
  }
}

export const operator = { config: { dashboard: 'operator' as const } }
/** The operators' own management: operator admins only. */
export const operatorAdmin = { config: { dashboard: 'operator' as const, operatorAdmin: true as const } }
export const partner = { config: { dashboard: 'partner' as const } }

/** A partner page that changes something of the current organisation: its role must allow `action`. */
export function partnerMay(action: MemberAction) {
  return { config: { dashboard: 'partner' as const, member: action } }
}
