import { type Kysely, sql } from 'kysely'

/**
 * Members and roles of an organisation (docs/accounts.md).
 *
 * `memberships`: which accounts belong to which organisation, as owner, developer or viewer; an
 * account may belong to several. Filled from the accounts as they were: each partner account linked
 * to an organisation (its approved application) becomes that organisation's owner, from the time
 * its application was approved (the account's own time when no application says so).
 * `accounts.organisation_id` stays, for the pages that still read it.
 *
 * `invitations`: an owner's invitation of an e-mail address, by a link valid 7 days and used once;
 * only the SHA-256 of the link's token is stored.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('memberships')
    .addColumn('organisation_id', 'text', (c) => c.notNull().references('organisations.id'))
    .addColumn('account_id', 'text', (c) => c.notNull().references('accounts.id'))
    .addColumn('role', 'text', (c) => c.notNull().check(sql`role in ('owner', 'developer', 'viewer')`))
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('memberships_pk', ['organisation_id', 'account_id'])
    .execute()
  // An account's organisations (switching between them), and its memberships when it is removed.
  await db.schema.createIndex('memberships_account').on('memberships').column('account_id').execute()
  await sql`insert into memberships (organisation_id, account_id, role, created_at)
    select a.organisation_id, a.id, 'owner', coalesce(
      (select min(p.decided_at) from applications as p
        where p.account_id = a.id and p.organisation_id = a.organisation_id and p.state = 'approved'),
      a.created_at)
    from accounts as a
    where a.role = 'partner' and a.organisation_id is not null`.execute(db)

  await db.schema
    .createTable('invitations')
    // What the dashboard names an invitation by (to revoke it): never the token or its hash.
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('token_hash', 'text', (c) => c.notNull().unique())
    .addColumn('organisation_id', 'text', (c) => c.notNull().references('organisations.id'))
    // Lower-case and trimmed: the only address whose account may accept it.
    .addColumn('email', 'text', (c) => c.notNull())
    .addColumn('role', 'text', (c) => c.notNull().check(sql`role in ('owner', 'developer', 'viewer')`))
    .addColumn('invited_by', 'text', (c) => c.notNull().references('accounts.id'))
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('expires_at', 'text', (c) => c.notNull())
    .addColumn('accepted_at', 'text')
    .addColumn('revoked_at', 'text')
    .execute()
  // An organisation's pending invitations (the page, the cap, the one per address).
  await db.schema
    .createIndex('invitations_organisation')
    .on('invitations')
    .columns(['organisation_id', 'email'])
    .execute()
}
