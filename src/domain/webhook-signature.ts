/**
 * Webhook signatures as the Standard Webhooks specification defines them
 * (https://www.standardwebhooks.com): the signed content is `<id>.<timestamp>.<body>`, signed
 * with HMAC-SHA256 under the secret's bytes (the base64 after `whsec_`), sent as
 * `webhook-signature: v1,<base64>`; several space-separated signatures while a secret is rolled.
 */
import { createHmac, randomBytes } from 'node:crypto'

export const SECRET_PREFIX = 'whsec_'

/**
 * How far a delivery's `webhook-timestamp` may be from the receiver's clock, either way: what the
 * Standard Webhooks libraries accept, and what a receiver checking by hand should use.
 */
export const SIGNATURE_TOLERANCE_SECONDS = 5 * 60

/** A new signing secret: 32 random bytes, in the specification's `whsec_<base64>` form. */
export function generateWebhookSecret(): string {
  return `${SECRET_PREFIX}${randomBytes(32).toString('base64')}`
}

export function isWebhookSecret(secret: string): boolean {
  return secret.startsWith(SECRET_PREFIX) && Buffer.from(secret.slice(SECRET_PREFIX.length), 'base64').length >= 24
}

/** One `v1,<base64>` signature of the message. */
export function signWebhook(secret: string, id: string, timestampSeconds: number, body: string): string {
  const key = Buffer.from(secret.slice(SECRET_PREFIX.length), 'base64')
  const mac = createHmac('sha256', key).update(`${id}.${timestampSeconds}.${body}`).digest('base64')
  return `v1,${mac}`
}

/** The `webhook-signature` header: one signature per secret in force (the new one first while rolling). */
export function signatureHeader(
  secrets: readonly string[],
  id: string,
  timestampSeconds: number,
  body: string,
): string {
  return secrets.map((secret) => signWebhook(secret, id, timestampSeconds, body)).join(' ')
}
