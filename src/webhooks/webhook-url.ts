/**
 * A partner's endpoint URL, checked when it is registered (and again, address by address, at
 * every delivery: see send-webhook.ts). Only https; no credentials in the URL; a host name or a
 * public address. With `allowLoopback` (local development and tests) plain http to a loopback
 * host is accepted too.
 */
import { isIP } from 'node:net'
import { isForbiddenAddress, isLoopback } from './forbidden-addresses.js'

export const MAX_WEBHOOK_URL_LENGTH = 2048

export type UrlVerdict = { ok: true; url: URL } | { ok: false; reason: string }

export function checkWebhookUrl(text: string, allowLoopback = false): UrlVerdict {
  if (text.length > MAX_WEBHOOK_URL_LENGTH) return { ok: false, reason: 'The URL is longer than 2048 characters.' }
  let url: URL
  try {
    url = new URL(text)
  } catch {
    return { ok: false, reason: 'Enter a full URL, such as https://example.com/webhooks/curriculum.' }
  }
  const host = url.hostname.replace(/^\[|\]$/g, '')
  const loopbackHost = host === 'localhost' || isLoopback(host)
  const plainAllowed = allowLoopback && url.protocol === 'http:' && loopbackHost
  if (url.protocol !== 'https:' && !plainAllowed) return { ok: false, reason: 'The URL must start with https://.' }
  if (url.username !== '' || url.password !== '') return { ok: false, reason: 'Leave credentials out of the URL.' }
  if (host === 'localhost' && !allowLoopback) return { ok: false, reason: 'The URL must name a public host.' }
  if (isIP(host) !== 0 && isForbiddenAddress(host, allowLoopback)) {
    return { ok: false, reason: 'The URL must name a public host, not a private, loopback or link-local address.' }
  }
  url.hash = ''
  return { ok: true, url }
}
