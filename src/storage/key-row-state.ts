import { type KeyState, keyState } from '../domain/api-key.js'
import type { ApiKeyRow } from './tables.js'

/** A stored key's state by the rule the API enforces (`keyState`, domain/api-key.ts). */
export function keyRowState(row: ApiKeyRow, now: number): KeyState {
  const time = (iso: string | null) => (iso === null ? null : Date.parse(iso))
  return keyState({ revokedAt: time(row.revoked_at), expiresAt: time(row.expires_at) }, now)
}
