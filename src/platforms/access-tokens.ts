/**
 * Access tokens for platforms' services, one per registration, kept until shortly before they
 * expire, so that scores sent together share one token request. Attempts that need a token while
 * one is being requested wait for that request rather than making their own. A token the platform
 * refuses (a 401) is dropped, so the next attempt asks for a new one. Failures are not kept.
 */
import type { Clock } from '../clock.js'
import type { TokenAnswer, TokenEndpoint } from './ags-client.js'

/** A token is dropped this long before it expires: time for the request that uses it, and skew. */
export const TOKEN_MARGIN_MS = 60_000

/** How long a token without `expires_in` is kept (RFC 6749 leaves its life to the server). */
export const UNSTATED_TOKEN_LIFE_MS = 300_000

type Failure = Extract<TokenAnswer, { ok: false }>

export type Token = { ok: true; token: string } | Failure

interface Entry {
  /** The registration's endpoint and scope when asked: another (an edited registration) asks again. */
  endpoint: string
  answer: Promise<Token>
  /** Epoch ms after which the token is not used; Infinity while being requested. */
  until: number
}

/** How long a token answered at `now` with `expiresInS` is used. */
export function keptUntil(now: number, expiresInS: number | undefined): number {
  const life = expiresInS === undefined ? UNSTATED_TOKEN_LIFE_MS : expiresInS * 1000
  // A short-lived token is kept half its life rather than not at all.
  return now + Math.max(life - TOKEN_MARGIN_MS, life / 2)
}

export class AccessTokens {
  readonly #request: (endpoint: TokenEndpoint) => Promise<TokenAnswer>
  readonly #clock: Clock
  readonly #entries = new Map<string, Entry>()

  /** `request` asks the platform for a token (ags-client.ts `requestAccessToken`, with the key and settings). */
  constructor(request: (endpoint: TokenEndpoint) => Promise<TokenAnswer>, clock: Clock) {
    this.#request = request
    this.#clock = clock
  }

  /** The registration's token: the one kept, the one being requested, or a new one. */
  get(registrationId: string, endpoint: TokenEndpoint): Promise<Token> {
    const described = JSON.stringify(endpoint)
    const kept = this.#entries.get(registrationId)
    if (kept !== undefined && kept.endpoint === described && this.#clock.now() < kept.until) return kept.answer
    // Settled after `entry` is set: a promise's callbacks never run in the same turn.
    let entry: Entry | undefined
    const forget = () => {
      if (entry !== undefined && this.#entries.get(registrationId) === entry) this.#entries.delete(registrationId)
    }
    const answer = this.#request(endpoint).then(
      (answered): Token => {
        if (!answered.ok) {
          forget()
          return answered
        }
        if (entry !== undefined) entry.until = keptUntil(this.#clock.now(), answered.expiresInS)
        return { ok: true, token: answered.token }
      },
      (error: unknown): Token => {
        forget()
        return { ok: false, status: null, error: String(error), response: '' }
      },
    )
    entry = { endpoint: described, until: Number.POSITIVE_INFINITY, answer }
    this.#entries.set(registrationId, entry)
    return entry.answer
  }

  /** Drops `token` if it is the registration's kept one (the platform refused it). */
  async drop(registrationId: string, token: string): Promise<void> {
    const kept = this.#entries.get(registrationId)
    if (kept === undefined) return
    const answer = await kept.answer
    if (this.#entries.get(registrationId) === kept && answer.ok && answer.token === token)
      this.#entries.delete(registrationId)
  }

  /** Tokens kept now (tests look). */
  get size(): number {
    return this.#entries.size
  }
}
