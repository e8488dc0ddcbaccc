/** The curriculum tiers the contract fixes. Labels and age ranges come from the catalog files. */
export const TIER_IDS = ['explorer', 'builder', 'innovator'] as const

export type TierId = (typeof TIER_IDS)[number]

export function isTierId(value: unknown): value is TierId {
  return typeof value === 'string' && (TIER_IDS as readonly string[]).includes(value)
}
