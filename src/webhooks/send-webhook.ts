/**
 * One delivery attempt: a POST to the endpoint, with the SSRF rules applied at the moment of
 * sending. Every address the host resolves to must be allowed, and the connection goes to that
 * checked address (the request's `lookup` returns it), so the name cannot be re-resolved to an
 * internal address in between. Redirects are not followed (a 3xx is a failed attempt), the whole
 * attempt has one deadline, and at most 1 KB of the answer is kept.
 */
import http from 'node:http'
import https from 'node:https'
import type { AttemptRecord } from '../storage/webhook-outbox-repository.js'
import { checkedAddress, pinnedLookup, type Resolve } from './checked-address.js'

export const KEPT_RESPONSE_BYTES = 1024

export interface SendOptions {
  timeoutMs: number
  allowLoopback: boolean
  /** Name resolution (tests substitute it); every address is checked. */
  resolve?: Resolve
  /** Aborted when the server stops: the attempt is cut short. */
  stopping?: AbortSignal
}

export async function sendWebhook(
  url: URL,
  headers: Record<string, string>,
  body: string,
  options: SendOptions,
): Promise<AttemptRecord> {
  const started = performance.now()
  const failed = (error: string): AttemptRecord => ({
    ok: false,
    status: null,
    latencyMs: Math.round(performance.now() - started),
    error,
    response: '',
    bodySent: false,
  })
  // One message, naming no address, whether the name resolves to an internal address or not at
  // all: the delivery log must not let a partner map names inside our network.
  const target = await checkedAddress(url, options.allowLoopback, options.resolve)
  if (target === undefined) return failed('refused: the host does not resolve to a public address')
  const client = url.protocol === 'https:' ? https : http
  return new Promise<AttemptRecord>((resolve) => {
    let bodySent = false
    const request = client.request(
      url,
      {
        method: 'POST',
        headers: { ...headers, 'content-length': String(Buffer.byteLength(body)) },
        signal:
          options.stopping === undefined
            ? AbortSignal.timeout(options.timeoutMs)
            : AbortSignal.any([AbortSignal.timeout(options.timeoutMs), options.stopping]),
        agent: false,
        lookup: pinnedLookup(target),
      },
      (response) => {
        const chunks: Buffer[] = []
        let kept = 0
        response.on('data', (chunk: Buffer) => {
          if (kept < KEPT_RESPONSE_BYTES) {
            chunks.push(chunk.subarray(0, KEPT_RESPONSE_BYTES - kept))
            kept += chunk.length
          }
          // Nothing more is needed; a large or endless answer is cut off.
          if (kept >= KEPT_RESPONSE_BYTES) response.destroy()
        })
        const finish = () => {
          const status = response.statusCode ?? null
          resolve({
            ok: status !== null && status >= 200 && status < 300,
            status,
            latencyMs: Math.round(performance.now() - started),
            error: null,
            response: Buffer.concat(chunks).toString('utf8').slice(0, KEPT_RESPONSE_BYTES),
            bodySent: true,
          })
        }
        response.on('end', finish)
        response.on('close', finish)
        response.on('error', () => {})
      },
    )
    // Emitted once the last of the body is handed to the connection.
    request.on('finish', () => {
      bodySent = true
    })
    request.on('error', (error: NodeJS.ErrnoException) => {
      const aborted = error.name === 'AbortError' || error.name === 'TimeoutError'
      const reason = options.stopping?.aborted ? 'cut short: the server stopped' : 'timed out'
      resolve({ ...failed(aborted ? reason : (error.code ?? error.message)), bodySent })
    })
    request.end(body)
  })
}
