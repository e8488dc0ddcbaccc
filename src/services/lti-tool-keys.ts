/**
 * The tool's LTI key for this process: read again at most every RELOAD_MS, so that a rotation by
 * another instance reaches this one within that time (the retired key stays published far longer).
 */
import type { Kysely } from 'kysely'
import { type Clock, isoAt } from '../clock.js'
import type { ToolKey, ToolPublicJwk } from '../domain/lti-tool-key.js'
import { loadToolKey } from '../cases/lti-tool-key.js'
import { retiredToolKeys } from '../storage/lti-tool-key-repository.js'
import type { Database } from '../storage/tables.js'

const RELOAD_MS = 60_000

export interface ToolKeys {
  /** The key that signs now. */
  current(): Promise<ToolKey>
  /** The published key set: the key in use, then the retired keys still published. */
  keySet(): Promise<{ keys: ToolPublicJwk[] }>
}

export function toolKeys(db: Kysely<Database>, clock: Clock): ToolKeys {
  let loaded: { at: number; key: Promise<ToolKey>; set: Promise<{ keys: ToolPublicJwk[] }> } | undefined
  const fresh = () => {
    const now = clock.now()
    if (loaded === undefined || now - loaded.at >= RELOAD_MS) {
      const key = loadToolKey(db)
      const set = key.then(async (current) => {
        const retired = await retiredToolKeys(db, isoAt(now))
        return {
          keys: [current.publicJwk, ...retired.map((r) => r.jwk).filter((jwk) => jwk.kid !== current.publicJwk.kid)],
        }
      })
      const entry = { at: now, key, set }
      // A failed load is tried again at the next use.
      set.catch(() => {
        if (loaded === entry) loaded = undefined
      })
      loaded = entry
    }
    return loaded
  }
  return { current: () => fresh().key, keySet: () => fresh().set }
}
