/**
 * The platforms' key sets, which their id_tokens are checked against: fetched from each
 * registration's `jwks_uri`, kept, and fetched again when a token names a key the kept set lacks
 * (a platform rotated its key) or the set is older than MAX_AGE_MS. Fetches of one registration's
 * set are at most one per REFETCH_MS, so that tokens naming made-up keys cannot make the tool
 * hammer a platform (or be used to); concurrent launches share one fetch. Fetched under the
 * platforms' request rules (platforms/platform-fetch.ts): https to public addresses, no redirects,
 * TIMEOUT_MS, MAX_BYTES.
 */
import { createLocalJWKSet, errors, type JSONWebKeySet, type JWTVerifyGetKey } from 'jose'
import type { Clock } from '../clock.js'
import { platformFetch } from '../platforms/platform-fetch.js'
import type { LtiRegistrationRow } from '../storage/tables.js'

export const REFETCH_MS = 10_000
const MAX_AGE_MS = 3_600_000
const TIMEOUT_MS = 5_000
/** A key set of a few keys is a few kilobytes; anything much larger is not one. */
const MAX_BYTES = 256 * 1024

/** The platform's key set could not be had: the launch cannot be checked (a 502, not the user's fault). */
export class PlatformKeysUnavailable extends Error {
  override name = 'PlatformKeysUnavailable'
}

interface Entry {
  jwksUri: string
  keys: JWTVerifyGetKey | undefined
  fetchedAt: number
  fetching: Promise<JWTVerifyGetKey> | undefined
}

export interface PlatformKeysOptions {
  clock: Clock
  /** Development only: key sets on this machine (plain http too) are fetched. */
  allowLoopback: boolean
}

export class PlatformKeys {
  readonly #entries = new Map<string, Entry>()
  readonly #clock: Clock
  readonly #allowLoopback: boolean

  constructor(options: PlatformKeysOptions) {
    this.#clock = options.clock
    this.#allowLoopback = options.allowLoopback
  }

  /** The key lookup jose's `jwtVerify` calls for a token of `registration`. */
  keyFor(registration: Pick<LtiRegistrationRow, 'id' | 'jwks_uri'>): JWTVerifyGetKey {
    return async (header, token) => {
      const entry = this.#entry(registration)
      const now = this.#clock.now()
      const stale = entry.keys === undefined || now - entry.fetchedAt >= MAX_AGE_MS
      let keys = stale ? await this.#refresh(entry, entry.keys) : entry.keys!
      try {
        return await keys(header, token)
      } catch (error) {
        if (!(error instanceof errors.JWKSNoMatchingKey) || stale || now - entry.fetchedAt < REFETCH_MS) throw error
        keys = await this.#refresh(entry, undefined)
        return keys(header, token)
      }
    }
  }

  #entry(registration: Pick<LtiRegistrationRow, 'id' | 'jwks_uri'>): Entry {
    let entry = this.#entries.get(registration.id)
    if (entry === undefined || entry.jwksUri !== registration.jwks_uri) {
      entry = { jwksUri: registration.jwks_uri, keys: undefined, fetchedAt: 0, fetching: undefined }
      this.#entries.set(registration.id, entry)
    }
    return entry
  }

  /** Fetches the set again (one fetch for concurrent callers); a failure keeps `fallback`, if any, for now. */
  async #refresh(entry: Entry, fallback: JWTVerifyGetKey | undefined): Promise<JWTVerifyGetKey> {
    entry.fetching ??= this.#fetchSet(entry.jwksUri).finally(() => {
      entry.fetching = undefined
    })
    const attempt = entry.fetching
    // Counted from the attempt, failed or not: a platform that is down is not asked again at once.
    entry.fetchedAt = this.#clock.now()
    try {
      entry.keys = await attempt
      return entry.keys
    } catch (error) {
      if (fallback !== undefined) return fallback
      throw error
    }
  }

  async #fetchSet(jwksUri: string): Promise<JWTVerifyGetKey> {
    // The webhooks' SSRF rules: https, public addresses (loopback only when allowed), no redirects.
    const answer = await platformFetch(jwksUri, {
      method: 'GET',
      headers: { accept: 'application/jwk-set+json, application/json' },
      timeoutMs: TIMEOUT_MS,
      allowLoopback: this.#allowLoopback,
      maxBytes: MAX_BYTES,
    })
    if (!answer.ok) throw new PlatformKeysUnavailable(`${jwksUri} could not be fetched (${answer.error})`)
    if (answer.status !== 200) throw new PlatformKeysUnavailable(`${jwksUri} answered ${answer.status}`)
    try {
      return createLocalJWKSet(JSON.parse(answer.body) as JSONWebKeySet)
    } catch {
      throw new PlatformKeysUnavailable(`${jwksUri} did not answer with a JSON Web Key Set`)
    }
  }
}
