/**
 * One request to a learning platform (its OpenID configuration, registration endpoint, key set,
 * token endpoint, line items and scores), under the same server-side request forgery rules as
 * webhooks (webhooks/forbidden-addresses.ts): https only (plain http to loopback with
 * LTI_ALLOW_LOOPBACK, for tests), every address the host resolves to checked and the connection
 * made to the checked address, no redirects followed, one deadline, and the answer cut off at
 * `maxBytes` so a hostile platform cannot fill our memory.
 */
import http from 'node:http'
import https from 'node:https'
import { checkedAddress, pinnedLookup, type Resolve } from '../webhooks/checked-address.js'
import { checkWebhookUrl } from '../webhooks/webhook-url.js'

export interface PlatformRequest {
  method: 'GET' | 'POST'
  headers?: Record<string, string>
  body?: string
  timeoutMs: number
  allowLoopback: boolean
  /** The most of the answer kept; a longer one is an error (`too_large`). */
  maxBytes: number
  /** Name resolution (tests substitute it); every address is checked. */
  resolve?: Resolve
  /** Aborted when the server stops. */
  stopping?: AbortSignal
}

export type PlatformAnswer =
  | { ok: true; status: number; contentType: string; body: string }
  /** No answer: refused by our rules, unreachable, timed out, or too large. */
  | { ok: false; error: string }

/** A platform URL as we accept it (https, a public host), or why not. */
export function checkPlatformUrl(text: string, allowLoopback: boolean) {
  return checkWebhookUrl(text, allowLoopback)
}

export async function platformFetch(text: string, request: PlatformRequest): Promise<PlatformAnswer> {
  const checked = checkPlatformUrl(text, request.allowLoopback)
  if (!checked.ok) return { ok: false, error: `refused: ${checked.reason}` }
  const url = checked.url
  const target = await checkedAddress(url, request.allowLoopback, request.resolve)
  if (target === undefined) return { ok: false, error: 'refused: the host does not resolve to a public address' }
  const client = url.protocol === 'https:' ? https : http
  const deadline = AbortSignal.timeout(request.timeoutMs)
  return new Promise<PlatformAnswer>((resolve) => {
    const outgoing = client.request(
      url,
      {
        method: request.method,
        headers: {
          ...request.headers,
          ...(request.body === undefined ? {} : { 'content-length': String(Buffer.byteLength(request.body)) }),
        },
        signal: request.stopping === undefined ? deadline : AbortSignal.any([deadline, request.stopping]),
        agent: false,
        lookup: pinnedLookup(target),
      },
      (response) => {
        const chunks: Buffer[] = []
        let size = 0
        let settled = false
        response.on('data', (chunk: Buffer) => {
          size += chunk.length
          if (size > request.maxBytes) {
            settled = true
            response.destroy()
            resolve({ ok: false, error: `too_large: the answer is over ${request.maxBytes} bytes` })
            return
          }
          chunks.push(chunk)
        })
        response.on('end', () => {
          if (settled) return
          settled = true
          resolve({
            ok: true,
            status: response.statusCode ?? 0,
            contentType: String(response.headers['content-type'] ?? ''),
            body: Buffer.concat(chunks).toString('utf8'),
          })
        })
        response.on('error', () => {
          if (settled) return
          settled = true
          resolve({ ok: false, error: 'the answer was cut off' })
        })
      },
    )
    outgoing.on('error', (error: NodeJS.ErrnoException) => {
      const aborted = error.name === 'AbortError' || error.name === 'TimeoutError'
      resolve({
        ok: false,
        error: aborted
          ? request.stopping?.aborted
            ? 'cut short: the server stopped'
            : 'timed out'
          : (error.code ?? error.message),
      })
    })
    outgoing.end(request.body)
  })
}

/** A JSON object from a platform, or why not (status, media type, size, syntax). */
export async function platformJson(
  text: string,
  request: PlatformRequest,
): Promise<
  { ok: true; status: number; json: Record<string, unknown> } | { ok: false; status: number | null; error: string }
> {
  const answer = await platformFetch(text, request)
  if (!answer.ok) return { ok: false, status: null, error: answer.error }
  try {
    const json = JSON.parse(answer.body) as unknown
    if (json === null || typeof json !== 'object' || Array.isArray(json))
      return { ok: false, status: answer.status, error: 'the answer is not a JSON object' }
    return { ok: true, status: answer.status, json: json as Record<string, unknown> }
  } catch {
    return { ok: false, status: answer.status, error: 'the answer is not JSON' }
  }
}
