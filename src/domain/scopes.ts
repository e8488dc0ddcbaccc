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

/**
 * A set of scopes as bits of one number (bit i: SCOPES[i]), which is what a cached key record
 * holds: a small integer in place of a Set for each of tens of thousands of keys.
 */
export type ScopeBits = number

/** The bits of the known scopes in `scopes`; unknown names are left out. */
export function scopeBits(scopes: Iterable<string>): ScopeBits {
  let bits = 0
  for (const scope of scopes) {
    const index = (SCOPES as readonly string[]).indexOf(scope)
    if (index !== -1) bits |= 1 << index
  }
  return bits
}

export function hasScope(bits: ScopeBits, scope: Scope): boolean {
  return (bits & (1 << SCOPES.indexOf(scope))) !== 0
}

/** The scopes a bit set holds, in SCOPES order. */
export function scopesIn(bits: ScopeBits): Scope[] {
  return SCOPES.filter((_, index) => (bits & (1 << index)) !== 0)
}
