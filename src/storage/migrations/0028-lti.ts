import type { Kysely } from 'kysely'

/**
 * LTI 1.3 (docs/lti.md): the learning platforms registered as the tool's consumers, their
 * deployments, the login states a launch must come back with, the students a launch made (one per
 * registration and `sub`), the resource links that put a lesson into a course, the outbox of
 * scores for the platforms' gradebooks, and where each student is in a lesson of the player.
 * Times are ISO 8601 text, as elsewhere.
 */
export async function up(db: Kysely<any>): Promise<void> {
  // The URLs an operator hands a district for dynamic registration: one per organisation.
  await db.schema
    .createTable('lti_registration_links')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('organisation_id', 'text', (c) => c.notNull().references('organisations.id'))
    // A school the registration's students attend, so that its school shares follow them.
    .addColumn('school_id', 'text', (c) => c.references('schools.id'))
    // SHA-256 (hex) of the token in the URL; the token itself is shown once.
    .addColumn('token_hash', 'text', (c) => c.notNull().unique())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('created_by', 'text')
    .addColumn('revoked_at', 'text')
    .execute()

  await db.schema
    .createTable('lti_registrations')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('organisation_id', 'text', (c) => c.notNull().references('organisations.id'))
    .addColumn('school_id', 'text', (c) => c.references('schools.id'))
    .addColumn('link_id', 'text', (c) => c.references('lti_registration_links.id'))
    // The list share that links the registration's students to its organisation (made at activation).
    .addColumn('share_id', 'text', (c) => c.references('shares.id'))
    // 'dynamic' or 'manual'.
    .addColumn('method', 'text', (c) => c.notNull())
    // 'pending' until an operator activates it, then 'active'; 'inactive' once deactivated.
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('issuer', 'text', (c) => c.notNull())
    .addColumn('client_id', 'text', (c) => c.notNull())
    .addColumn('auth_login_url', 'text', (c) => c.notNull())
    .addColumn('token_url', 'text', (c) => c.notNull())
    // The `aud` of our client assertion when the platform advertises an authorization server.
    .addColumn('token_audience', 'text')
    .addColumn('jwks_uri', 'text', (c) => c.notNull())
    // The platform's product (`lti_platform_configuration.product_family_code`), for the dashboard.
    .addColumn('product', 'text')
    // Space-separated AGS scopes the platform granted.
    .addColumn('scopes', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('created_by', 'text')
    .addColumn('activated_at', 'text')
    .addColumn('activated_by', 'text')
    .addColumn('deactivated_at', 'text')
    .addUniqueConstraint('lti_registrations_issuer_client', ['issuer', 'client_id'])
    .execute()

  await db.schema
    .createTable('lti_deployments')
    .addColumn('registration_id', 'text', (c) => c.notNull().references('lti_registrations.id'))
    .addColumn('deployment_id', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('lti_deployments_pk', ['registration_id', 'deployment_id'])
    .execute()

  // A login's state and nonce, kept server-side because the launch is a cross-site POST; used once.
  await db.schema
    .createTable('lti_login_states')
    // SHA-256 (hex) of the state.
    .addColumn('state_hash', 'text', (c) => c.primaryKey())
    .addColumn('registration_id', 'text', (c) => c.notNull())
    .addColumn('nonce', 'text', (c) => c.notNull())
    .addColumn('expires_at', 'text', (c) => c.notNull())
    .execute()

  // The student a platform's user is, per registration: `sub` alone names them there.
  await db.schema
    .createTable('lti_students')
    .addColumn('registration_id', 'text', (c) => c.notNull().references('lti_registrations.id'))
    .addColumn('sub', 'text', (c) => c.notNull())
    .addColumn('student_id', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('lti_students_pk', ['registration_id', 'sub'])
    .execute()
  await db.schema.createIndex('lti_students_student').on('lti_students').column('student_id').execute()

  // A lesson placed in a course: what its launches open and where its scores go.
  await db.schema
    .createTable('lti_resource_links')
    .addColumn('registration_id', 'text', (c) => c.notNull().references('lti_registrations.id'))
    .addColumn('resource_link_id', 'text', (c) => c.notNull())
    .addColumn('deployment_id', 'text', (c) => c.notNull())
    .addColumn('context_id', 'text')
    .addColumn('lesson_slug', 'text', (c) => c.notNull())
    // The AGS endpoint claim: the line item of this link, and the context's line items.
    .addColumn('line_item_url', 'text')
    .addColumn('line_items_url', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('lti_resource_links_pk', ['registration_id', 'resource_link_id'])
    .execute()
  await db.schema
    .createIndex('lti_resource_links_lesson')
    .on('lti_resource_links')
    .columns(['registration_id', 'lesson_slug'])
    .execute()

  // The scores owed to platforms' gradebooks, written with the progress change that owes them.
  await db.schema
    .createTable('lti_scores')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('registration_id', 'text', (c) => c.notNull())
    .addColumn('resource_link_id', 'text', (c) => c.notNull())
    .addColumn('student_id', 'text', (c) => c.notNull())
    .addColumn('lesson_slug', 'text', (c) => c.notNull())
    // The score's JSON (application/vnd.ims.lis.v1.score+json) and its timestamp, for ordering.
    .addColumn('payload', 'text', (c) => c.notNull())
    .addColumn('timestamp', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    // 'pending', 'sent', 'failed' (a 4xx), 'cancelled' (superseded or access ended).
    .addColumn('state', 'text', (c) => c.notNull())
    .addColumn('attempts', 'integer', (c) => c.notNull())
    .addColumn('next_attempt_at', 'text')
    .addColumn('lease_until', 'text')
    .addColumn('last_attempt_at', 'text')
    .addColumn('last_status', 'integer')
    .addColumn('last_error', 'text')
    .addColumn('last_response', 'text')
    .addColumn('sent_at', 'text')
    .execute()
  await db.schema.createIndex('lti_scores_due').on('lti_scores').columns(['state', 'next_attempt_at']).execute()
  await db.schema.createIndex('lti_scores_student').on('lti_scores').column('student_id').execute()
  await db.schema
    .createIndex('lti_scores_registration')
    .on('lti_scores')
    .columns(['registration_id', 'created_at'])
    .execute()

  // Where a student is in a lesson of the player: what its XP and time are counted from. Erased with the student.
  await db.schema
    .createTable('lti_lesson_states')
    .addColumn('student_id', 'text', (c) => c.notNull().references('students.id'))
    .addColumn('lesson_slug', 'text', (c) => c.notNull())
    // Slides moved on from, counted from the first.
    .addColumn('slides_done', 'integer', (c) => c.notNull())
    // JSON object: a quiz slide's index -> whether its first answer was right.
    .addColumn('first_tries', 'text', (c) => c.notNull())
    // When the student's last page of the lesson was shown: the next step's time counts from it.
    .addColumn('last_step_at', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('lti_lesson_states_pk', ['student_id', 'lesson_slug'])
    .execute()
}
