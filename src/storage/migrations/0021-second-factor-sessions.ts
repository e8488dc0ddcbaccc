import type { Kysely } from 'kysely'

/**
 * A session signed in with the password of an account that has a second factor, waiting for its
 * code (dashboard/session.ts, docs/security.md "Second factor"): it reaches only the code page and
 * sign-out, and lasts 10 minutes. Existing sessions are full ones.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .alterTable('sessions')
    .addColumn('second_factor_pending', 'integer', (c) => c.notNull().defaultTo(0))
    .execute()
}
