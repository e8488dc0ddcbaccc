/**
 * The tool's LTI signing key: RSA with RS256, as LTI 1.3 requires of a tool (its client assertions
 * and deep-linking responses). Kept as its PKCS #8 encoding and published as a JSON Web Key named
 * by its RFC 7638 thumbprint, so a platform fetching our key set finds the key a token names.
 */
import { createPrivateKey, createPublicKey, generateKeyPairSync, hash, type KeyObject } from 'node:crypto'

/** A public key as published at /lti/jwks. */
export interface ToolPublicJwk {
  kty: 'RSA'
  n: string
  e: string
  kid: string
  use: 'sig'
  alg: 'RS256'
}

export interface ToolKey {
  readonly privateKey: KeyObject
  readonly publicJwk: ToolPublicJwk
}

/** A new private key, as stored: PKCS #8 DER, base64url. */
export function newToolKeyText(): string {
  return generateKeyPairSync('rsa', { modulusLength: 2048 })
    .privateKey.export({ format: 'der', type: 'pkcs8' })
    .toString('base64url')
}

/** The key stored as `newToolKeyText` made it; throws for anything else. */
export function toolKeyFrom(text: string): ToolKey {
  const privateKey = createPrivateKey({ key: Buffer.from(text, 'base64url'), format: 'der', type: 'pkcs8' })
  if (privateKey.asymmetricKeyType !== 'rsa') throw new Error('the stored LTI tool key is not an RSA key')
  const { n, e } = createPublicKey(privateKey).export({ format: 'jwk' })
  return { privateKey, publicJwk: toolPublicJwk(n!, e!) }
}

export function toolPublicJwk(n: string, e: string): ToolPublicJwk {
  // RFC 7638: the required members in lexicographic order.
  const kid = hash('sha256', `{"e":"${e}","kty":"RSA","n":"${n}"}`, 'base64url')
  return { kty: 'RSA', n, e, kid, use: 'sig', alg: 'RS256' }
}
