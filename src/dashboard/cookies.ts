/**
 * Just enough of RFC 6265 for the dashboard's two cookies: read the Cookie header, write a
 * Set-Cookie. Values are base64url, so nothing needs quoting.
 */
import type { FastifyReply, FastifyRequest } from 'fastify'

export function readCookie(request: FastifyRequest, name: string): string | undefined {
  const header = request.headers.cookie
  if (header === undefined) return undefined
  for (const part of header.split(';')) {
    const eq = part.indexOf('=')
    if (eq !== -1 && part.slice(0, eq).trim() === name) {
      const value = part.slice(eq + 1).trim()
      return /^[A-Za-z0-9_-]{1,200}$/.test(value) ? value : undefined
    }
  }
  return undefined
}

export interface CookieOptions {
  maxAgeSeconds?: number
  /** Send only over TLS; set when the request itself came over TLS. */
  secure: boolean
}

/** httpOnly, SameSite=Lax and scoped to /dashboard, always. */
export function setCookie(reply: FastifyReply, name: string, value: string, options: CookieOptions): void {
  const parts = [`${name}=${value}`, 'Path=/dashboard', 'HttpOnly', 'SameSite=Lax']
  if (options.maxAgeSeconds !== undefined) parts.push(`Max-Age=${options.maxAgeSeconds}`)
  if (options.secure) parts.push('Secure')
  const existing = reply.getHeader('set-cookie')
  const list = existing === undefined ? [] : Array.isArray(existing) ? existing.map(String) : [String(existing)]
  reply.header('set-cookie', [...list.filter((cookie) => !cookie.startsWith(`${name}=`)), parts.join('; ')])
}

export function clearCookie(reply: FastifyReply, name: string, secure: boolean): void {
  setCookie(reply, name, 'deleted', { maxAgeSeconds: 0, secure })
}
