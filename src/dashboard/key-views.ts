/**
 * A new key stays on its page for KEY_VIEW_MS after it was created, so reloading the page (or
 * a form re-sent by the browser) does not lose it: the form that creates a key answers 303 to
 * a page of its own (POST-redirect-GET), `/dashboard/partner/keys/shown/<view token>`.
 *
 * Where the key waits: in the database, because any instance may answer the reload (memory of
 * one process would miss it behind a load balancer), but sealed so that the database alone
 * cannot give it back:
 * - AES-256-GCM under a key derived (HKDF-SHA256) from the creating session's token, a secret
 *   shared by the instances, and the view token. The session token lives only in the partner's
 *   cookie (the sessions table has its hash), the view token only in the page's address (the
 *   row is named by its hash). A copy of the database, the shared secret included, opens
 *   nothing; another session, even of the same account, cannot open it either.
 * - The row goes when the partner hides the key, or after KEY_VIEW_MS with the next view
 *   anyone adds or reads. After that only the key's hash is left. A row that lingers for want
 *   of traffic is still sealed: without the session cookie it is noise.
 */
import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto'
import type { FastifyRequest } from 'fastify'
import type { Kysely } from 'kysely'
import { addKeyView, findKeyView, hideKeyView } from '../cases/key-views.js'
import type { Clock } from '../clock.js'
import { isoAt } from '../clock.js'
import type { ApiKeyRow, Database } from '../storage/tables.js'
import { keyViewId } from '../storage/key-view-repository.js'
import type { SessionSupport } from './session.js'

/** How long a new key can be shown again: long enough to copy it, short enough to leave nothing behind. */
export const KEY_VIEW_MS = 10 * 60_000

export interface ShownKey {
  key: string
  keyId: string
  welcome: boolean
  expiresAt: number
}

export interface KeyViews {
  /** Seals the key for this session; the view token for the page's address. */
  offer(
    request: FastifyRequest,
    created: { key: string; row: ApiKeyRow },
    options?: { welcome?: boolean },
  ): Promise<string>
  /** The key behind a view token, if this session created it and its time is not up. */
  open(request: FastifyRequest, viewToken: string): Promise<ShownKey | undefined>
  /** Forgets the key now (the partner has copied it). */
  hide(request: FastifyRequest, viewToken: string): Promise<void>
}

function cipherKey(secret: Buffer, sessionToken: string, viewToken: string): Buffer {
  return Buffer.from(hkdfSync('sha256', Buffer.from(sessionToken), secret, `key-view:${viewToken}`, 32))
}

export function seal(secret: Buffer, sessionToken: string, viewToken: string, plaintext: string): string {
  const iv = randomBytes(12)
  const cipher = createCipheriv('aes-256-gcm', cipherKey(secret, sessionToken, viewToken), iv)
  cipher.setAAD(Buffer.from(keyViewId(viewToken)))
  const body = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()])
  return [iv, cipher.getAuthTag(), body].map((part) => part.toString('base64url')).join('.')
}

/** The plaintext, or undefined when the session or the view token is not the one it was sealed for. */
export function unseal(secret: Buffer, sessionToken: string, viewToken: string, sealed: string): string | undefined {
  const [iv, tag, body] = sealed.split('.').map((part) => Buffer.from(part, 'base64url'))
  if (iv === undefined || tag === undefined || body === undefined) return undefined
  try {
    const decipher = createDecipheriv('aes-256-gcm', cipherKey(secret, sessionToken, viewToken), iv)
    decipher.setAAD(Buffer.from(keyViewId(viewToken)))
    decipher.setAuthTag(tag)
    return Buffer.concat([decipher.update(body), decipher.final()]).toString('utf8')
  } catch {
    return undefined
  }
}

const VIEW_TOKEN = /^[A-Za-z0-9_-]{43}$/

export function createKeyViews(options: {
  db: Kysely<Database>
  clock: Clock
  secret: Buffer
  sessions: SessionSupport
}): KeyViews {
  const { db, clock, secret, sessions } = options
  return {
    async offer(request, created, { welcome = false } = {}) {
      const sessionToken = sessions.tokenOf(request)
      if (sessionToken === undefined || request.account === null)
        throw new Error('a key view needs a signed-in session')
      const viewToken = randomBytes(32).toString('base64url')
      const now = clock.now()
      await addKeyView(
        db,
        {
          id: keyViewId(viewToken),
          account_id: request.account.id,
          key_id: created.row.id,
          welcome: welcome ? 1 : 0,
          sealed_key: seal(secret, sessionToken, viewToken, created.key),
          expires_at: isoAt(now + KEY_VIEW_MS),
        },
        now,
      )
      return viewToken
    },
    async open(request, viewToken) {
      const sessionToken = sessions.tokenOf(request)
      if (sessionToken === undefined || request.account === null || !VIEW_TOKEN.test(viewToken)) return undefined
      const row = await findKeyView(db, viewToken, request.account.id, clock.now())
      if (row === undefined) return undefined
      const key = unseal(secret, sessionToken, viewToken, row.sealed_key)
      return key === undefined
        ? undefined
        : { key, keyId: row.key_id, welcome: row.welcome === 1, expiresAt: Date.parse(row.expires_at) }
    },
    async hide(request, viewToken) {
      if (request.account !== null && VIEW_TOKEN.test(viewToken)) await hideKeyView(db, viewToken, request.account.id)
    },
  }
}
