/**
 * The tool's client assertion for a platform's token endpoint (LTI Security Framework 1.0, 4.1;
 * RFC 7523, section 2.2): a JWT signed by the tool key with RS256, naming the key by `kid`, issued
 * by and about our client id, for the token endpoint (or the authorization server the platform
 * advertised), unique by `jti` and short-lived, so a copy is worth little and cannot be replayed.
 */
import { randomUUID } from 'node:crypto'
import { SignJWT } from 'jose'
import type { ToolKey } from '../domain/lti-tool-key.js'

export const CLIENT_ASSERTION_TYPE = 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer'

/** How long an assertion is good for: it is used at once, and platforms refuse long-lived ones. */
export const ASSERTION_LIFETIME_S = 300

export interface AssertionFor {
  /** Our client id at the platform: `iss` and `sub`. */
  clientId: string
  /** The token endpoint, or the `token_audience` a registration recorded: `aud`. */
  audience: string
  /** Epoch ms (the injected clock's). */
  now: number
}

/**
 * @example
 * await clientAssertion(key, { clientId: 'abc', audience: 'https://lms.example/token', now: Date.now() })
 */
export function clientAssertion(key: ToolKey, assertion: AssertionFor): Promise<string> {
  const iat = Math.floor(assertion.now / 1000)
  return new SignJWT({})
    .setProtectedHeader({ alg: 'RS256', kid: key.publicJwk.kid, typ: 'JWT' })
    .setIssuer(assertion.clientId)
    .setSubject(assertion.clientId)
    .setAudience(assertion.audience)
    .setJti(randomUUID())
    .setIssuedAt(iat)
    .setExpirationTime(iat + ASSERTION_LIFETIME_S)
    .sign(key.privateKey)
}
