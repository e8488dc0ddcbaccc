/**
 * The tables, described once. Timestamps are ISO 8601 UTC strings with milliseconds
 * (`toISOString()`): fixed width, so they sort and compare as text on both SQLite and PostgreSQL,
 * and the same queries serve both engines.
 */
import type { ColumnType, Generated, Insertable, Selectable } from 'kysely'
import type { KeyMode } from '../domain/api-key.js'
import type { ApplicationState, OrganisationStatus } from '../domain/application-state.js'
import type { DisclosureAction, DisclosureOutcome } from '../domain/disclosure.js'
import type { MemberRole } from '../domain/member-roles.js'
import type { OperatorRole } from '../domain/operator-roles.js'
import type { ProgressStatus } from '../domain/progress.js'
import type { StudentChangeKind } from '../domain/student-change.js'
import type { TierId } from '../domain/tiers.js'
import type { NoticeEvent, SentEvent } from '../domain/webhook-events.js'

/** A column the database fills on insert and the code never writes afterwards with another type. */
type GeneratedAs<T> = ColumnType<T, T | undefined, T>

/** `partner`, or `sandbox`: a partner's synthetic students, reached only by test keys. */
export type OrganisationKind = 'partner' | 'sandbox'
export type AccountRole = 'partner' | 'operator'

export interface MetaTable {
  /**
   * `catalog` or `access`: bumped in the same transaction as the change they announce;
   * `student_changes`: the last sequence number of the student change log.
   */
  name: string
  version: number
}

export interface TiersTable {
  id: TierId
  label: string
  age_range: string
  position: number
}

export interface LessonsTable {
  slug: string
  tier: TierId
  lesson_id: string
  title: string
  slide_count: number
  /** JSON array of strings. */
  content_types: string
  /** JSON object framework -> codes. */
  standards: string
  /**
   * JSON array of {framework, code, caseIdentifier?, caseUri?}, one per code of `standards` in its
   * order; null for lessons imported before CASE maps were read.
   */
  standards_alignment: string | null
  /** JSON array of slides, as imported. */
  slides: string
  position: number
  source_file: string
}

export interface OrganisationsTable {
  id: string
  name: string
  status: OrganisationStatus
  created_at: string
  kind: GeneratedAs<OrganisationKind>
  /** Space-separated scopes the operator granted; the organisation's keys stay within them. */
  allowed_scopes: Generated<string>
  /** 1 when its owners require a second factor of every member (migration 0024). */
  require_second_factor: Generated<number>
}

export interface AgreementsTable {
  id: string
  organisation_id: string
  signed_at: string
  expires_at: string | null
  ended_at: string | null
  document_ref: string
  created_at: string
  /** What the partner may use the data for (migration 0011); '' for agreements recorded before. */
  purpose: GeneratedAs<string>
  /** Space-separated kinds of data shared: `first_name`, `tier`, `progress` (domain/agreement-terms.ts). */
  data_categories: GeneratedAs<string>
  /** Days after the agreement's end within which the partner must delete the data. */
  disposition_days: GeneratedAs<number>
}

export interface ApiKeysTable {
  id: string
  organisation_id: string
  name: string
  /** The first characters of the key, kept in clear to tell keys apart. */
  display_prefix: string
  /** SHA-256 hex of the whole key; the key itself is never stored. */
  key_hash: string
  /** Space-separated scopes (RFC 6749 3.3). */
  scopes: string
  mode: KeyMode
  created_at: string
  expires_at: string | null
  revoked_at: string | null
  last_used_at: string | null
  /** The dashboard account that created the key; null for the CLI. */
  created_by: string | null
  /** When the key was rolled; it then works until `expires_at`, the end of the overlap. */
  rolled_at: string | null
  /** The id of the key that replaced it when it was rolled. */
  replaced_by: string | null
  /** The client address of a request in the window `last_used_at` names. */
  last_used_address: string | null
  /** That request's user agent family ("curl", "Python requests", "Node.js", ...). */
  last_used_agent: string | null
}

export interface StudentsTable {
  id: string
  first_name: string
  tier: TierId
  tier_updated_at: string
  created_at: string
  /** 1 for synthetic sandbox students (test keys only), 0 for real ones (live keys only). */
  sandbox: Generated<number>
  /**
   * When the student's tier or progress last changed (the time of their latest entry in
   * `student_changes`); null on rows written without it, which then read `tier_updated_at`.
   */
  updated_at: string | null
  /** The student's sourcedId in the district's system (OneRoster), unique; null when not given. */
  external_id: GeneratedAs<string | null>
  /** The source system of the roster that first listed the student (migration 0014); null when not known. */
  source: GeneratedAs<string | null>
}

export interface SchoolsTable {
  id: string
  name: string
  /** The org's sourcedId in the district's system (OneRoster), unique; null for schools made by hand. */
  external_id: string | null
  /** The school's own code (OneRoster `identifier`), shown beside its name. */
  identifier: string | null
  created_at: string
  /** The source system of the roster that keeps the school (migration 0014); null when not known. */
  source: GeneratedAs<string | null>
  /** The sourcedId of the school's district org in that roster; null when not known. */
  district_external_id: GeneratedAs<string | null>
}

export interface StudentSchoolsTable {
  student_id: string
  school_id: string
  created_at: string
}

/** A school an erased student attended, by ids only (migration 0015): the export by school reads it. */
export interface ErasedStudentSchoolsTable {
  school_id: string
  student_id: string
  erased_at: string
}

/** `school`: a school's students, present and future; `list`: the ids given. */
export type ShareKind = 'school' | 'list'

export interface SharesTable {
  id: string
  organisation_id: string
  kind: ShareKind
  /** The school shared, for a `school` share. */
  school_id: string | null
  /** What the operator called it (a list's file name), or the school's name. */
  label: string
  created_at: string
  /** `operator:<account id>`, `cli:<user>` or `migration`. */
  created_by: string | null
  ended_at: string | null
}

/** A share's students: a link exists while some share of its organisation holds the student. */
export interface ShareStudentsTable {
  share_id: string
  student_id: string
  organisation_id: string
}

/**
 * An agreement whose disposition period ran out with no other agreement of its organisation in
 * force: the organisation's shares and links ended then (migration 0013, cases/agreement-disposition.ts).
 */
export interface AgreementDispositionsTable {
  id: string
  organisation_id: string
  agreement_id: string
  /** When the agreement stopped applying: the earlier of its expiry and its end. */
  ended_at: string
  /** `ended_at` plus the agreement's disposition period: the partner must have deleted the data by then. */
  deletion_due_at: string
  /**
   * When the links ended (the disposition ran): after `deletion_due_at`, or before when disposed
   * of early on demand.
   */
  unlinked_at: string
  /** Students linked then, listed in `disposition_students`. */
  students: number
  shares_ended: number
}

/** The students of a disposition, by id only. */
export interface DispositionStudentsTable {
  disposition_id: string
  student_id: string
}

/** A partner's statement that it deleted the data shared under an agreement; one per agreement. */
export interface DeletionAttestationsTable {
  agreement_id: string
  organisation_id: string
  attested_at: string
  /** The dashboard account that attested, or null when an API key did. */
  account_id: string | null
  /** The API key that attested, or null when a dashboard account did. */
  key_id: string | null
  /** Students on the deletion list when it was attested (migration 0016); null for earlier attestations. */
  students: GeneratedAs<number | null>
}

/**
 * A notice that a student left a partner organisation, by ids and time only, kept after the
 * change feed's retention (migration 0016, student-departure-repository.ts).
 */
export interface StudentDeparturesTable {
  organisation_id: string
  student_id: string
  at: string
  event: NoticeEvent
}

export interface StudentOrganisationsTable {
  student_id: string
  organisation_id: string
  created_at: string
}

export interface ProgressTable {
  student_id: string
  lesson_slug: string
  status: ProgressStatus
  xp: number
  time_seconds: number
  started_at: string
  completed_at: string | null
}

export interface DisclosuresTable {
  id: Generated<number>
  at: string
  request_id: string
  key_id: string
  organisation_id: string
  student_id: string
  action: DisclosureAction
  outcome: DisclosureOutcome
}

/**
 * One change of a student's tier or progress, or a notice to one organisation that a student left
 * it, numbered in commit order (migrations 0006 and 0010, student-change-log.ts).
 */
export interface StudentChangesTable {
  seq: number
  student_id: string
  kind: StudentChangeKind
  changed_at: string
  /** A notice's organisation; null on a change of the student's data. */
  organisation_id: string | null
  /** tier_changed: the tier now set. */
  tier: TierId | null
  /** progress_updated: the entry as it now is. */
  lesson_slug: string | null
  status: ProgressStatus | null
  xp: number | null
  time_seconds: number | null
  started_at: string | null
  completed_at: string | null
}

/** A sealed run of consecutive disclosure ids whose lookups are built (migration 0005, disclosure-log.ts). */
export interface DisclosureSegmentsTable {
  first_id: number
  last_id: number
  first_at: string | null
  last_at: string | null
  rows: number
  sealed_at: string
}

/** `s`tudent, `o`rganisation or `k`ey: what a lookup entry finds disclosures by. */
export type DisclosureDimension = 's' | 'o' | 'k'

export interface DisclosureLookupTable {
  segment: number
  dimension: DisclosureDimension
  value: string
  id: number
}

export type WebhookEventType = SentEvent
/** `not_sent`: refused before sending, the organisation's access to the student having ended. */
export type DeliveryState = 'pending' | 'delivered' | 'failed' | 'not_sent'

/** Migration 0007; src/webhooks. */
export interface WebhookEndpointsTable {
  id: string
  organisation_id: string
  mode: KeyMode
  url: string
  events: string
  secret: string
  previous_secret: string | null
  previous_secret_until: string | null
  status: 'enabled' | 'disabled'
  disabled_reason: string | null
  failing_since: string | null
  created_at: string
  created_by: string | null
  /** When its deliveries were last claimed (migration 0009): the least recently served go first. */
  claimed_at: GeneratedAs<string | null>
  /** Nothing is sent to it before this, after attempts that timed out. */
  backoff_until: GeneratedAs<string | null>
  /** Attempts in a row that timed out. */
  timeouts: GeneratedAs<number>
}

export interface WebhookDeliveriesTable {
  id: string
  endpoint_id: string
  event_type: WebhookEventType
  payload: string
  student_id: string | null
  created_at: string
  state: DeliveryState
  attempts: number
  next_attempt_at: string | null
  lease_until: string | null
  last_attempt_at: string | null
  last_status: number | null
  last_latency_ms: number | null
  last_error: string | null
  last_response: string | null
  /** When a body of it first left for the endpoint: its one disclosure row was written then. */
  first_sent_at: GeneratedAs<string | null>
}

/** A test event or resend a partner asked for (migration 0009): they are limited per endpoint. */
export interface WebhookManualSendsTable {
  id: string
  endpoint_id: string
  at: string
}

/** `interrupted`: its sending process stopped mid-send; never sent again but by an operator (docs/email.md). */
export type MailState = 'pending' | 'sending' | 'sent' | 'failed' | 'interrupted'

/** Migration 0017; cases/mail.ts holds its rules, src/mail/ sends it. */
export interface MailOutboxTable {
  id: Generated<number>
  /** What the message is for: `test` now; verification, reset, invitation, notices later. */
  kind: string
  recipient: string
  subject: string
  text_body: string
  html_body: string | null
  created_at: string
  state: MailState
  attempts: GeneratedAs<number>
  next_attempt_at: string | null
  lease_until: string | null
  last_error: string | null
  sent_at: string | null
  message_id: string | null
}

export interface AccountsTable {
  id: string
  /** Lower-cased. */
  email: string
  /** `scrypt$<N>$<r>$<p>$<salt>$<hash>` (base64url). */
  password_hash: string
  role: AccountRole
  organisation_id: string | null
  sandbox_organisation_id: string | null
  created_at: string
  /** When the account's current address was last proven by a mailed link (migration 0018); null until then. */
  email_verified_at: string | null
  /** `admin` or `operator` for an operator account, null for a partner's (migration 0023). */
  operator_role: OperatorRole | null
}

export interface SessionsTable {
  /** SHA-256 of the cookie's token; the token itself is never stored. */
  token_hash: string
  account_id: string
  created_at: string
  expires_at: string
  /** What a form names the session by (migration 0018): never its token or the token's hash. */
  id: string | null
  /** Kept to the minute: a page view writes it only when a minute has passed or the address changed. */
  last_used_at: string | null
  last_address: string | null
  /** The browser's User-Agent, at most 256 characters. */
  user_agent: string | null
  /** 1 while the password was right but the second factor's code is still awaited (migration 0021). */
  second_factor_pending: GeneratedAs<number>
}

export type AccountLinkPurpose = 'verify-email' | 'password-reset' | 'email-change'

/** A link mailed to an account (migration 0018, cases/email-verification.ts, cases/password-reset.ts). */
export interface AccountLinksTable {
  /** SHA-256 (hex) of the token in the link; the token itself is never stored. */
  token_hash: string
  account_id: string
  purpose: AccountLinkPurpose
  /** The address it was sent to: for an e-mail change, the new one. */
  email: string
  created_at: string
  expires_at: string
  /** When it was used, or retired by a later event (a reset, a change of address). */
  used_at: string | null
}

/** An account's role in an organisation (migration 0020); an account may belong to several. */
export interface MembershipsTable {
  organisation_id: string
  account_id: string
  role: MemberRole
  created_at: string
}

/** An owner's invitation of an address to the organisation (migration 0020). */
export interface InvitationsTable {
  id: string
  /** SHA-256 (hex) of the link's token; the token itself is never stored. */
  token_hash: string
  organisation_id: string
  /** Lower-cased: the only address whose account may accept it. */
  email: string
  role: MemberRole
  /** The inviting owner's account. */
  invited_by: string
  created_at: string
  expires_at: string
  accepted_at: string | null
  revoked_at: string | null
}

/** An optional notice an account turned off (migration 0022, cases/notices.ts). */
export interface NoticeOptOutsTable {
  account_id: string
  topic: string
  created_at: string
}

/** A time-based notice sent once, whichever instance sent it (migration 0022). */
export interface NoticesSentTable {
  kind: string
  subject: string
  threshold: string
  sent_at: string
}

/** A browser an account signed in from, by the SHA-256 of its device cookie (migration 0022). */
export interface KnownDevicesTable {
  account_id: string
  device_hash: string
  first_seen_at: string
  last_seen_at: string
}

/** An admin's invitation of an address to become an operator (migration 0023, cases/operators.ts). */
export interface OperatorInvitationsTable {
  id: string
  /** SHA-256 (hex) of the link's token; the token itself is never stored. */
  token_hash: string
  /** Lower-cased: the only address that may accept it. */
  email: string
  role: OperatorRole
  /** The inviting admin's address (not a reference: removing that account keeps the row). */
  invited_by: string
  created_at: string
  expires_at: string
  accepted_at: string | null
  revoked_at: string | null
}

export interface ApplicationsTable {
  id: string
  account_id: string
  organisation_name: string
  website: string
  contact_name: string
  contact_email: string
  intended_use: string
  /** Space-separated student scopes asked for (the catalog is always included). */
  requested_scopes: string
  state: ApplicationState
  decision_reason: string | null
  decided_by: string | null
  decided_at: string | null
  organisation_id: string | null
  created_at: string
}

export interface UsageDailyTable {
  key_id: string
  /** UTC day, YYYY-MM-DD. */
  day: string
  requests: number
  /** Requests answered 429. */
  throttled: number
}

export interface AuditLogTable {
  id: Generated<number>
  at: string
  /** Who: `account:<email>` or `cli:<user>`. */
  actor: string
  action: string
  /** What it was done to, e.g. `organisation:<id>`. */
  target: string
  /** JSON object with the particulars. */
  detail: string
}

export interface SettingsTable {
  name: string
  value: string
}

/** What changed about a key's access; see access-change-repository.ts. */
export type AccessChangeKind = 'key_revoked' | 'key_rolled' | 'organisation_status' | 'agreements'

export interface AccessChangesTable {
  /** The `access` version the change set; in order and without gaps. */
  seq: number
  kind: AccessChangeKind
  /** The key concerned, for a change to one key; null when the change concerns every key of the organisation. */
  key_id: string | null
  organisation_id: string
}

/** A new key's one-time view (migration 0004, src/dashboard/key-views.ts). */
export interface KeyViewsTable {
  /** SHA-256 (hex) of the view token in the page's address. */
  id: string
  account_id: string
  key_id: string
  /** 1 for the first test key, shown on the welcome page. */
  welcome: number
  /** The key, AES-256-GCM under a key derived from the creating session's token: iv.tag.ciphertext (base64url). */
  sealed_key: string
  expires_at: string
}

/** An account's TOTP authenticator (migration 0019, cases/second-factor.ts). */
export interface TotpFactorsTable {
  account_id: string
  /** The RFC 6238 shared secret, sealed (domain/sealed-secret.ts): `v1.<iv>.<tag>.<ciphertext>`. */
  secret: string
  created_at: string
  /** Null while the enrolment waits for its first code. */
  confirmed_at: string | null
  /** The time step of the last accepted code; a code of that step or an earlier one is refused. */
  last_used_step: number | null
}

/** One-time recovery codes (migration 0019): only a keyed hash of each is stored. */
export interface RecoveryCodesTable {
  account_id: string
  code_hash: string
  created_at: string
  used_at: string | null
}

/** Failed second-factor codes of an account in the current window (migration 0019). */
export interface SecondFactorGuessesTable {
  account_id: string
  window_started_at: string
  failures: GeneratedAs<number>
}

/** WebAuthn credentials (migration 0019), kept for the passkeys slice (issue 40, item 8). */
export interface PasskeysTable {
  /** The credential id, base64url. */
  id: string
  account_id: string
  name: string
  /** The COSE public key, base64url. */
  public_key: string
  /** The signature counter: a bigint on PostgreSQL, which gives it back as a string (read it with Number()). */
  counter: GeneratedAs<number>
  /** Space-separated transports, or null. */
  transports: string | null
  created_at: string
  last_used_at: string | null
}

/** A WebAuthn challenge that signed a valid answer (migration 0025): never accepted again. */
export interface PasskeyChallengesUsedTable {
  /** SHA-256 (hex) of the challenge. */
  challenge_hash: string
  expires_at: string
}

/** A batch of an organisation's request-log entries (migration 0026, storage/request-log-batches.ts). */
export interface RequestLogTable {
  id: Generated<number>
  organisation_id: string
  /** Milliseconds since the epoch: the batch's first and last request. */
  first_at: number
  last_at: number
  entries: number
  /** A bit per status class present (1 << 2: 2xx). */
  statuses: number
  /** Space-separated key ids. */
  key_ids: string
  /** Newline-separated "METHOD route" lines. */
  routes: string
  /** Space-separated problem codes. */
  problems: string
  /** Space-separated client addresses. */
  addresses: string
  /** The entries (request-log-batches.ts). */
  data: Uint8Array
}

/** An LTI dynamic registration URL an operator made for an organisation (migration 0028). */
export interface LtiRegistrationLinksTable {
  id: string
  organisation_id: string
  school_id: string | null
  /** SHA-256 (hex) of the URL's token. */
  token_hash: string
  created_at: string
  created_by: string | null
  revoked_at: string | null
}

export type LtiRegistrationStatus = 'pending' | 'active' | 'inactive'

/** A learning platform registered as an LTI 1.3 consumer of the tool (migration 0028). */
export interface LtiRegistrationsTable {
  id: string
  organisation_id: string
  school_id: string | null
  link_id: string | null
  /** The list share linking its students to the organisation, made at activation. */
  share_id: string | null
  method: 'dynamic' | 'manual'
  status: LtiRegistrationStatus
  name: string
  issuer: string
  client_id: string
  auth_login_url: string
  token_url: string
  token_audience: string | null
  jwks_uri: string
  product: string | null
  /** Space-separated AGS scopes. */
  scopes: string
  created_at: string
  created_by: string | null
  activated_at: string | null
  activated_by: string | null
  deactivated_at: string | null
}

export interface LtiDeploymentsTable {
  registration_id: string
  deployment_id: string
  created_at: string
}

/** A login's state (hashed) and nonce, used once (migration 0028). */
export interface LtiLoginStatesTable {
  state_hash: string
  registration_id: string
  nonce: string
  expires_at: string
}

export interface LtiStudentsTable {
  registration_id: string
  sub: string
  student_id: string
  created_at: string
}

export interface LtiResourceLinksTable {
  registration_id: string
  resource_link_id: string
  deployment_id: string
  context_id: string | null
  lesson_slug: string
  line_item_url: string | null
  line_items_url: string | null
  created_at: string
  updated_at: string
}

export type LtiScoreState = 'pending' | 'sent' | 'failed' | 'cancelled'

/** A score owed to a platform's gradebook (migration 0028). */
export interface LtiScoresTable {
  id: string
  registration_id: string
  resource_link_id: string
  student_id: string
  lesson_slug: string
  payload: string
  timestamp: string
  created_at: string
  state: LtiScoreState
  attempts: number
  next_attempt_at: string | null
  lease_until: string | null
  last_attempt_at: string | null
  last_status: number | null
  last_error: string | null
  last_response: string | null
  sent_at: string | null
}

/** Where a student is in a lesson of the player (migration 0028, cases/lti-progress.ts). */
export interface LtiLessonStatesTable {
  student_id: string
  lesson_slug: string
  /** Slides moved on from, counted from the first. */
  slides_done: number
  /** JSON object: a quiz slide's index -> whether its first answer was right. */
  first_tries: string
  last_step_at: string
}

export interface Database {
  meta: MetaTable
  tiers: TiersTable
  lessons: LessonsTable
  organisations: OrganisationsTable
  agreements: AgreementsTable
  api_keys: ApiKeysTable
  students: StudentsTable
  student_organisations: StudentOrganisationsTable
  schools: SchoolsTable
  student_schools: StudentSchoolsTable
  erased_student_schools: ErasedStudentSchoolsTable
  shares: SharesTable
  share_students: ShareStudentsTable
  agreement_dispositions: AgreementDispositionsTable
  disposition_students: DispositionStudentsTable
  deletion_attestations: DeletionAttestationsTable
  student_departures: StudentDeparturesTable
  progress: ProgressTable
  disclosures: DisclosuresTable
  student_changes: StudentChangesTable
  disclosure_segments: DisclosureSegmentsTable
  disclosure_lookup: DisclosureLookupTable
  webhook_endpoints: WebhookEndpointsTable
  webhook_deliveries: WebhookDeliveriesTable
  webhook_manual_sends: WebhookManualSendsTable
  mail_outbox: MailOutboxTable
  accounts: AccountsTable
  sessions: SessionsTable
  account_links: AccountLinksTable
  memberships: MembershipsTable
  invitations: InvitationsTable
  operator_invitations: OperatorInvitationsTable
  applications: ApplicationsTable
  usage_daily: UsageDailyTable
  audit_log: AuditLogTable
  settings: SettingsTable
  access_changes: AccessChangesTable
  key_views: KeyViewsTable
  totp_factors: TotpFactorsTable
  recovery_codes: RecoveryCodesTable
  second_factor_guesses: SecondFactorGuessesTable
  passkeys: PasskeysTable
  notice_opt_outs: NoticeOptOutsTable
  notices_sent: NoticesSentTable
  known_devices: KnownDevicesTable
  passkey_challenges_used: PasskeyChallengesUsedTable
  request_log: RequestLogTable
  lti_registration_links: LtiRegistrationLinksTable
  lti_registrations: LtiRegistrationsTable
  lti_deployments: LtiDeploymentsTable
  lti_login_states: LtiLoginStatesTable
  lti_students: LtiStudentsTable
  lti_resource_links: LtiResourceLinksTable
  lti_scores: LtiScoresTable
  lti_lesson_states: LtiLessonStatesTable
}

export type LessonRow = Selectable<LessonsTable>
export type TierRow = Selectable<TiersTable>
export type OrganisationRow = Selectable<OrganisationsTable>
export type AgreementRow = Selectable<AgreementsTable>
export type ApiKeyRow = Selectable<ApiKeysTable>
export type NewApiKeyRow = Insertable<ApiKeysTable>
export type StudentRow = Selectable<StudentsTable>
export type ProgressRow = Selectable<ProgressTable>
export type DisclosureRow = Selectable<DisclosuresTable>
export type DisclosureSegmentRow = Selectable<DisclosureSegmentsTable>
export type WebhookEndpointRow = Selectable<WebhookEndpointsTable>
export type WebhookDeliveryRow = Selectable<WebhookDeliveriesTable>
export type MailRow = Selectable<MailOutboxTable>
export type AccountRow = Selectable<AccountsTable>
export type SessionRow = Selectable<SessionsTable>
export type AccountLinkRow = Selectable<AccountLinksTable>
export type ApplicationRow = Selectable<ApplicationsTable>
export type MembershipRow = Selectable<MembershipsTable>
export type InvitationRow = Selectable<InvitationsTable>
export type OperatorInvitationRow = Selectable<OperatorInvitationsTable>
export type AuditRow = Selectable<AuditLogTable>
export type AccessChangeRow = Selectable<AccessChangesTable>
export type KeyViewRow = Selectable<KeyViewsTable>
export type SchoolRow = Selectable<SchoolsTable>
export type ShareRow = Selectable<SharesTable>
export type AgreementDispositionRow = Selectable<AgreementDispositionsTable>
export type DeletionAttestationRow = Selectable<DeletionAttestationsTable>
export type TotpFactorRow = Selectable<TotpFactorsTable>
export type PasskeyRow = Selectable<PasskeysTable>
export type LtiRegistrationRow = Selectable<LtiRegistrationsTable>
export type LtiRegistrationLinkRow = Selectable<LtiRegistrationLinksTable>
export type LtiResourceLinkRow = Selectable<LtiResourceLinksTable>
export type LtiScoreRow = Selectable<LtiScoresTable>
export type LtiLessonStateRow = Selectable<LtiLessonStatesTable>
