/**
 * Scopes a key can carry. The catalog needs none; each student endpoint needs exactly one.
 * Scopes are stored space-separated, the RFC 6749 section 3.3 form.
 */
export const SCOPES = ['students:read', 'students:write'] as const

export type Scope = (typeof SCOPES)[number]

export function isScope(value: string): value is Scope {
  return (SCOPES as readonly string[]).includes(value)
}

/** Parses "a b" or "a,b"; throws on an unknown scope so a typo never yields a weaker key silently. */
export function parseScopes(text: string): Scope[] {
  const parts = text.split(/[\s,]+/).filter((part) => part !== '')
  const unknown = parts.filter((part) => !isScope(part))
  if (unknown.length > 0) {
    throw new Error(`unknown scope ${unknown.map((s) => `"${s}"`).join(', ')}; known scopes: ${SCOPES.join(', ')}`)
  }
  return [...new Set(parts as Scope[])].sort()
}

export function formatScopes(scopes: readonly Scope[]): string {
  return [...scopes].sort().join(' ')
}
