/**
 * Just enough of RFC 6265 for the dashboard's two cookies: read the Cookie header, write a
 * Set-Cookie. Values are base64url, so nothing needs quoting.
 *
 * Over TLS the names carry the `__Host-` prefix (RFC 6265bis section 4.1.3.2): a browser then
 * accepts the cookie only with Secure, Path=/ and no Domain, so a sibling subdomain cannot set
 * one for us and a narrower Path cannot shadow ours. Over plain HTTP browsers refuse the prefix,
 * so the plain name and Path=/dashboard are used.
 */
import type { FastifyReply, FastifyRequest } from 'fastify'

/** The name a cookie has on this request: `__Host-<base>` over TLS, `<base>` otherwise. */
export function cookieName(base: string, secure: boolean): string {
  return secure ? `__Host-${base}` : base
}

/** True when the request came over TLS (behind a proxy, only with TRUST_PROXY). */
export function isSecure(request: FastifyRequest): boolean {
  return request.protocol === 'https'
}

export function readCookie(request: FastifyRequest, base: string): string | undefined {
  const header = request.headers.cookie
  if (header === undefined) return undefined
  const name = cookieName(base, isSecure(request))
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
}

/** httpOnly and SameSite=Lax always; Secure, `__Host-` and Path=/ over TLS, else Path=/dashboard. */
export function setCookie(
  request: FastifyRequest,
  reply: FastifyReply,
  base: string,
  value: string,
  options: CookieOptions = {},
): void {
  const secure = isSecure(request)
  const name = cookieName(base, secure)
  const parts = [`${name}=${value}`, `Path=${secure ? '/' : '/dashboard'}`, 'HttpOnly', 'SameSite=Lax']
  if (options.maxAgeSeconds !== undefined) parts.push(`Max-Age=${options.maxAgeSeconds}`)
  if (secure) parts.push('Secure')
  const existing = reply.getHeader('set-cookie')
  const list = existing === undefined ? [] : Array.isArray(existing) ? existing.map(String) : [String(existing)]
  reply.header('set-cookie', [...list.filter((cookie) => !cookie.startsWith(`${name}=`)), parts.join('; ')])
}

export function clearCookie(request: FastifyRequest, reply: FastifyReply, base: string): void {
  setCookie(request, reply, base, 'deleted', { maxAgeSeconds: 0 })
}
