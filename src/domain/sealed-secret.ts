/**
 * A secret kept at rest sealed rather than in clear: AES-256-GCM under a key derived (HKDF-SHA256)
 * from a master key and a purpose, bound to a context (the owning row, as additional data) so a
 * sealed value copied into another row does not open there. Format: `v1.<iv>.<tag>.<ciphertext>`,
 * each part base64url.
 *
 * dashboard/key-views.ts seals a new API key the same way but under a session's token, which a
 * long-lived secret read at every sign-in (a TOTP secret) cannot depend on; this one is keyed by
 * a master key alone (cases/second-factor.ts says where it comes from and what that protects).
 */
import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto'

const VERSION = 'v1'
const TAG_BYTES = 16

/** A 32-byte AES key for one purpose, so one master key can serve several without reuse. */
export function purposeKey(master: Buffer, purpose: string): Buffer {
  return Buffer.from(hkdfSync('sha256', master, Buffer.alloc(0), `curriculum:${purpose}`, 32))
}

/** Seals `plaintext` for `context` (e.g. `totp:<account id>`). */
export function sealSecret(key: Buffer, context: string, plaintext: string): string {
  const iv = randomBytes(12)
  const cipher = createCipheriv('aes-256-gcm', key, iv)
  cipher.setAAD(Buffer.from(context))
  const body = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()])
  return [VERSION, ...[iv, cipher.getAuthTag(), body].map((part) => part.toString('base64url'))].join('.')
}

/** The plaintext, or undefined when `sealed` was not sealed under `key` for `context` (or was altered). */
export function openSecret(key: Buffer, context: string, sealed: string): string | undefined {
  const [version, ...parts] = sealed.split('.')
  if (version !== VERSION || parts.length !== 3) return undefined
  const [iv, tag, body] = parts.map((part) => Buffer.from(part, 'base64url')) as [Buffer, Buffer, Buffer]
  // A shorter tag would be accepted by GCM and is easier to forge.
  if (iv.length !== 12 || tag.length !== TAG_BYTES) return undefined
  try {
    const decipher = createDecipheriv('aes-256-gcm', key, iv, { authTagLength: TAG_BYTES })
    decipher.setAAD(Buffer.from(context))
    decipher.setAuthTag(tag)
    return Buffer.concat([decipher.update(body), decipher.final()]).toString('utf8')
  } catch {
    return undefined
  }
}
