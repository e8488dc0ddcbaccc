import { type Kysely, sql } from 'kysely'

/**
 * Several operators with two roles (docs/accounts.md, "Operators").
 *
 * `accounts.operator_role`: `admin` or `operator` for an operator account, null for a partner's.
 * Every operator account there was becomes an admin, since each could do everything until now.
 *
 * `operator_invitations`: an admin's invitation of an address to become an operator, by a link
 * valid 7 days and used once; only the SHA-256 of the link's token is stored. The inviting admin is
 * kept by address, not by a reference, so that removing that admin's account keeps the row.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .alterTable('accounts')
    .addColumn('operator_role', 'text', (c) => c.check(sql`operator_role in ('admin', 'operator')`))
    .execute()
  await sql`update accounts set operator_role = 'admin' where role = 'operator'`.execute(db)

  await db.schema
    .createTable('operator_invitations')
    // What the Operators page names an invitation by (to revoke it): never the token or its hash.
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('token_hash', 'text', (c) => c.notNull().unique())
    // Lower-case and trimmed: the only address that may accept it.
    .addColumn('email', 'text', (c) => c.notNull())
    .addColumn('role', 'text', (c) => c.notNull().check(sql`role in ('admin', 'operator')`))
    .addColumn('invited_by', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('expires_at', 'text', (c) => c.notNull())
    .addColumn('accepted_at', 'text')
    .addColumn('revoked_at', 'text')
    .execute()
  // An address's pending invitation (one at a time: a new one replaces it).
  await db.schema.createIndex('operator_invitations_email').on('operator_invitations').column('email').execute()
}
