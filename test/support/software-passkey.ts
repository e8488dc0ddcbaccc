/**
 * A passkey authenticator in software, for tests of the server's WebAuthn checks without a
 * browser: an ES256 key pair, the `none` attestation and the assertions a platform authenticator
 * would give (W3C WebAuthn Level 3, sections 6.1 and 6.5), encoded with a CBOR writer just big
 * enough for them. The browser tests use Chromium's own virtual authenticator instead.
 */
import { createHash, generateKeyPairSync, type KeyObject, randomBytes, sign } from 'node:crypto'

interface CborRecord {
  [key: string]: Cbor
}
type Cbor = number | string | Uint8Array | Map<number | string, Cbor> | CborRecord

function head(major: number, length: number): Buffer {
  if (length < 24) return Buffer.from([(major << 5) | length])
  if (length < 256) return Buffer.from([(major << 5) | 24, length])
  const out = Buffer.alloc(3)
  out[0] = (major << 5) | 25
  out.writeUInt16BE(length, 1)
  return out
}

function cbor(value: Cbor): Buffer {
  if (typeof value === 'number') return value >= 0 ? head(0, value) : head(1, -1 - value)
  if (typeof value === 'string') return Buffer.concat([head(3, Buffer.byteLength(value)), Buffer.from(value)])
  if (value instanceof Uint8Array) return Buffer.concat([head(2, value.length), Buffer.from(value)])
  const entries = value instanceof Map ? [...value.entries()] : Object.entries(value)
  return Buffer.concat([head(5, entries.length), ...entries.flatMap(([k, v]) => [cbor(k), cbor(v)])])
}

const b64url = (bytes: Uint8Array) => Buffer.from(bytes).toString('base64url')
const sha256 = (data: Uint8Array | string) => createHash('sha256').update(data).digest()

export interface SoftwarePasskeyOptions {
  origin: string
  rpId: string
  /** Whether the authenticator says it verified its user (a PIN, a fingerprint). */
  userVerified?: boolean
}

export class SoftwarePasskey {
  readonly id = randomBytes(16)
  #counter = 0
  readonly #privateKey: KeyObject
  readonly #publicKey: KeyObject
  readonly #options: Required<SoftwarePasskeyOptions>

  constructor(options: SoftwarePasskeyOptions) {
    const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' })
    this.#privateKey = privateKey
    this.#publicKey = publicKey
    this.#options = { userVerified: true, ...options }
  }

  /** Sets the signature counter the next answer will carry (minus one), to test regressions. */
  set counter(value: number) {
    this.#counter = value
  }

  #authData(attested: boolean): Buffer {
    const flags = 0x01 | (this.#options.userVerified ? 0x04 : 0) | (attested ? 0x40 : 0)
    const counter = Buffer.alloc(4)
    counter.writeUInt32BE(++this.#counter)
    const parts: Buffer[] = [sha256(this.#options.rpId), Buffer.from([flags]), counter]
    if (attested) {
      const jwk = this.#publicKey.export({ format: 'jwk' })
      const cose = new Map<number, Cbor>([
        [1, 2],
        [3, -7],
        [-1, 1],
        [-2, Buffer.from(jwk.x!, 'base64url')],
        [-3, Buffer.from(jwk.y!, 'base64url')],
      ])
      const idLength = Buffer.alloc(2)
      idLength.writeUInt16BE(this.id.length)
      parts.push(Buffer.alloc(16), idLength, this.id, cbor(cose))
    }
    return Buffer.concat(parts)
  }

  #clientData(type: string, challenge: string, origin = this.#options.origin): Buffer {
    return Buffer.from(JSON.stringify({ type, challenge, origin, crossOrigin: false }))
  }

  /** The browser's answer to registration `options` (their `challenge`, base64url). */
  register(options: { challenge: string }, origin?: string) {
    const attestation = cbor({ fmt: 'none', attStmt: {}, authData: this.#authData(true) })
    return {
      id: b64url(this.id),
      rawId: b64url(this.id),
      type: 'public-key' as const,
      clientExtensionResults: {},
      response: {
        clientDataJSON: b64url(this.#clientData('webauthn.create', options.challenge, origin)),
        attestationObject: b64url(attestation),
        transports: ['internal' as const],
      },
    }
  }

  /** The browser's answer to authentication `options`. */
  authenticate(options: { challenge: string }, origin?: string) {
    const authData = this.#authData(false)
    const clientData = this.#clientData('webauthn.get', options.challenge, origin)
    const signature = sign('sha256', Buffer.concat([authData, sha256(clientData)]), this.#privateKey)
    return {
      id: b64url(this.id),
      rawId: b64url(this.id),
      type: 'public-key' as const,
      clientExtensionResults: {},
      response: {
        clientDataJSON: b64url(clientData),
        authenticatorData: b64url(authData),
        signature: b64url(signature),
      },
    }
  }
}
