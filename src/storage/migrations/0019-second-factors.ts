import type { Kysely } from 'kysely'

/**
 * Second factors (cases/second-factor.ts, docs/security.md "Second factor"): an account's TOTP
 * authenticator (RFC 6238), its one-time recovery codes, the count of its failed codes, and the
 * table passkeys (WebAuthn) will use.
 */
export async function up(db: Kysely<any>, engine: 'sqlite' | 'postgres'): Promise<void> {
  // A WebAuthn signature counter is an unsigned 32-bit number: past PostgreSQL's `integer`.
  const bigint = engine === 'postgres' ? 'bigint' : 'integer'
  await db.schema
    .createTable('totp_factors')
    // One authenticator per account: enrolling again replaces a pending one, never a confirmed one.
    .addColumn('account_id', 'text', (c) => c.primaryKey().references('accounts.id'))
    // The shared secret, AES-256-GCM sealed (domain/sealed-secret.ts), never in clear.
    .addColumn('secret', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    // Null while pending: the factor takes effect only once a first code was accepted.
    .addColumn('confirmed_at', 'text')
    // The RFC 6238 time step of the last accepted code: a code of that step or an earlier one fails.
    .addColumn('last_used_step', 'integer')
    .execute()
  await db.schema
    .createTable('recovery_codes')
    .addColumn('account_id', 'text', (c) => c.notNull().references('accounts.id'))
    // HMAC-SHA256 of the normalised code (cases/second-factor.ts); the code itself is shown once.
    .addColumn('code_hash', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    // Set when the code was used; a code is used once.
    .addColumn('used_at', 'text')
    .addPrimaryKeyConstraint('recovery_codes_pkey', ['account_id', 'code_hash'])
    .execute()
  await db.schema
    .createTable('second_factor_guesses')
    .addColumn('account_id', 'text', (c) => c.primaryKey().references('accounts.id'))
    // The first failure of the current window; the window lasts GUESS_WINDOW_MS from it.
    .addColumn('window_started_at', 'text', (c) => c.notNull())
    // Codes refused in the window, each counted before it was checked.
    .addColumn('failures', 'integer', (c) => c.notNull().defaultTo(0))
    .execute()
  // For a later slice (issue 40, item 8): passkeys as a second factor and a way to sign in.
  await db.schema
    .createTable('passkeys')
    // The credential id, base64url.
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('account_id', 'text', (c) => c.notNull().references('accounts.id'))
    // What the account called it ("laptop", "phone").
    .addColumn('name', 'text', (c) => c.notNull())
    // The COSE public key, base64url: text keeps one column type on both engines.
    .addColumn('public_key', 'text', (c) => c.notNull())
    .addColumn('counter', bigint, (c) => c.notNull().defaultTo(0))
    // Space-separated WebAuthn transports (usb, nfc, ble, internal, hybrid); null when not told.
    .addColumn('transports', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('last_used_at', 'text')
    .execute()
  await db.schema.createIndex('passkeys_account').on('passkeys').column('account_id').execute()
}
