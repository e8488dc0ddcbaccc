/**
 * The service's Ed25519 signing key (RFC 8032), which signs certificates of deletion: kept as its
 * PKCS #8 encoding, published as a JSON Web Key (RFC 8037) named by its thumbprint (RFC 7638),
 * so that anyone holding a certificate can check it against the published key.
 */
import { createPrivateKey, createPublicKey, generateKeyPairSync, hash, type KeyObject, sign, verify } from 'node:crypto'

/** A public key as published in the JSON Web Key Set. */
export interface PublicJwk {
  kty: 'OKP'
  crv: 'Ed25519'
  /** The public key, base64url. */
  x: string
  /** Its RFC 7638 thumbprint: what a signature names its key by. */
  kid: string
  use: 'sig'
  alg: 'EdDSA'
}

export interface SigningKey {
  readonly privateKey: KeyObject
  readonly publicJwk: PublicJwk
}

/** A new private key, as stored: PKCS #8 DER, base64url. */
export function newSigningKeyText(): string {
  return generateKeyPairSync('ed25519').privateKey.export({ format: 'der', type: 'pkcs8' }).toString('base64url')
}

/** The key stored as `newSigningKeyText` made it; throws for anything else. */
export function signingKeyFrom(text: string): SigningKey {
  const privateKey = createPrivateKey({ key: Buffer.from(text, 'base64url'), format: 'der', type: 'pkcs8' })
  if (privateKey.asymmetricKeyType !== 'ed25519') throw new Error('the stored signing key is not an Ed25519 key')
  const { x } = createPublicKey(privateKey).export({ format: 'jwk' })
  return { privateKey, publicJwk: publicJwkOf(x!) }
}

/** The published form of the Ed25519 public key `x` (base64url), named by its thumbprint. */
export function publicJwkOf(x: string): PublicJwk {
  return { kty: 'OKP', crv: 'Ed25519', x, kid: thumbprint(x), use: 'sig', alg: 'EdDSA' }
}

/** RFC 7638: SHA-256 of the required members in lexicographic order, base64url. */
function thumbprint(x: string): string {
  return hash('sha256', `{"crv":"Ed25519","kty":"OKP","x":"${x}"}`, 'base64url')
}

/** The Ed25519 signature of `bytes`, base64. */
export function signBytes(key: SigningKey, bytes: string): string {
  return sign(null, Buffer.from(bytes, 'utf8'), key.privateKey).toString('base64')
}

/** Whether `signature` (base64) is the signature of `bytes` by the key `jwk` publishes. */
export function verifyBytes(jwk: Pick<PublicJwk, 'kty' | 'crv' | 'x'>, bytes: string, signature: string): boolean {
  const key = createPublicKey({ key: { kty: jwk.kty, crv: jwk.crv, x: jwk.x }, format: 'jwk' })
  return verify(null, Buffer.from(bytes, 'utf8'), key, Buffer.from(signature, 'base64'))
}
