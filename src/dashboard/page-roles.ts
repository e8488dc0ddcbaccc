/** Route options that give a page to one kind of account; dashboard-plugin.ts checks them before the handler runs. */
export const operator = { config: { dashboard: 'operator' as const } }
export const partner = { config: { dashboard: 'partner' as const } }
