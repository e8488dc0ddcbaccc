import type { Kysely } from 'kysely'

/**
 * The WebAuthn challenges that signed a valid answer (cases/passkeys.ts): a challenge is made
 * without storage, and recorded here once used, so that it is never accepted twice; rows go once
 * the challenge has expired.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('passkey_challenges_used')
    // SHA-256 (hex) of the challenge.
    .addColumn('challenge_hash', 'text', (c) => c.primaryKey())
    .addColumn('expires_at', 'text', (c) => c.notNull())
    .execute()
}
