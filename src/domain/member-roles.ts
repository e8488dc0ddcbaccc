/**
 * What a member of a partner organisation may do, by role (docs/accounts.md): the one place a
 * page or a case asks, so that a role means the same everywhere.
 *
 *   owner      everything: the members and their roles, the application, agreements' contacts,
 *              the deletion attestation, the organisation's settings, and all a developer does
 *   developer  API keys, usage, logs, webhooks, the sandbox's test data, and all a viewer does
 *   viewer     reads the organisation's pages and changes nothing
 */

export const MEMBER_ROLES = ['owner', 'developer', 'viewer'] as const
export type MemberRole = (typeof MEMBER_ROLES)[number]

/** Everything a member may be allowed; closed, so a page asking for an unknown action does not compile. */
export type MemberAction =
  /** See the organisation's pages: overview, keys (never a secret), usage, logs, webhooks, members. */
  | 'organisation.read'
  /** Create and revoke API keys. */
  | 'keys.manage'
  /** Add, change, roll, enable, disable and test webhook endpoints; send a delivery again. */
  | 'webhooks.manage'
  /** The sandbox's made-up students (make more, reset them). */
  | 'test-data.manage'
  /** Invite, revoke invitations, change roles, remove members. */
  | 'members.manage'
  /** The organisation's contacts on its agreements, and its application for live access. */
  | 'agreements.contacts'
  /** Attest that an ended agreement's data was deleted: a statement made for the organisation. */
  | 'deletion.attest'
  /** The organisation's own settings (for instance, a second factor required of its members). */
  | 'organisation.settings'
  /** See the learning platforms registered for the organisation (LTI), whose gradebooks get its students' progress. */
  | 'lti.read'

const DEVELOPER: readonly MemberAction[] = ['organisation.read', 'keys.manage', 'webhooks.manage', 'test-data.manage']

const ALLOWED: Record<MemberRole, ReadonlySet<MemberAction>> = {
  owner: new Set<MemberAction>([
    ...DEVELOPER,
    'members.manage',
    'agreements.contacts',
    'deletion.attest',
    'organisation.settings',
    'lti.read',
  ]),
  developer: new Set(DEVELOPER),
  viewer: new Set<MemberAction>(['organisation.read']),
}

/** Whether a member with `role` may do `action`; nothing is allowed to someone who is no member. */
export function may(role: MemberRole | undefined, action: MemberAction): boolean {
  return role !== undefined && ALLOWED[role].has(action)
}

/** What each role may do, in the words the invitation mail and the members page use. */
export const ROLE_SUMMARIES: Record<MemberRole, string> = {
  owner: "everything, including the members and their roles, the agreements' contacts and the application",
  developer: 'API keys, usage, logs, webhooks and test data',
  viewer: "reads the organisation's pages and changes nothing",
}

/** A role as a form or a command line gives it, or undefined for anything else. */
export function memberRole(value: string): MemberRole | undefined {
  return (MEMBER_ROLES as readonly string[]).includes(value) ? (value as MemberRole) : undefined
}
