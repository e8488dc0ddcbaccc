/**
 * A launch's roles, reduced to the three the tool acts on: learner, instructor and administrator.
 * Platforms send LIS role URIs (context roles, their sub-roles, institution and system roles) and
 * sometimes the short context role names LTI 1.3 still allows; anything else (Mentor, Guest,
 * Member...) is dropped, so a user without one of the three is treated as no learner.
 */
import type { LtiRole } from './lti-player-session.js'

const LIS = 'http://purl.imsglobal.org/vocab/lis/v2/'

const PRINCIPALS: Readonly<Record<string, LtiRole>> = {
  // Context roles (membership#X, and membership/X#SubRole for their sub-roles), and their short names.
  'membership:Learner': 'learner',
  'membership:Instructor': 'instructor',
  'membership:ContentDeveloper': 'instructor',
  'membership:Administrator': 'administrator',
  // Institution and system roles, which some platforms send alone.
  'institution/person:Student': 'learner',
  'institution/person:Learner': 'learner',
  'institution/person:Faculty': 'instructor',
  'institution/person:Instructor': 'instructor',
  'institution/person:Administrator': 'administrator',
  'system/person:Administrator': 'administrator',
  'system/person:SysAdmin': 'administrator',
}

const ORDER: readonly LtiRole[] = ['learner', 'instructor', 'administrator']

function principal(role: string): LtiRole | undefined {
  if (!role.startsWith(LIS)) return PRINCIPALS[`membership:${role}`]
  const rest = role.slice(LIS.length)
  // membership/Instructor#TeachingAssistant is a sub-role of Instructor.
  const sub = /^membership\/([A-Za-z]+)#[A-Za-z]+$/.exec(rest)
  if (sub !== null) return PRINCIPALS[`membership:${sub[1]}`]
  // Some platforms write a sub-role as membership#Instructor#TeachingAssistant: its principal role counts.
  const [vocabulary, name] = rest.split('#')
  return name === undefined ? undefined : PRINCIPALS[`${vocabulary}:${name}`]
}

/** The roles claim as the tool keeps it: each of the three at most once, in a fixed order. */
export function reducedRoles(claim: unknown): LtiRole[] {
  if (!Array.isArray(claim)) return []
  const found = new Set<LtiRole>()
  for (const role of claim.slice(0, 100)) {
    if (typeof role !== 'string' || role.length > 300) continue
    const reduced = principal(role)
    if (reduced !== undefined) found.add(reduced)
  }
  return ORDER.filter((role) => found.has(role))
}

/** Teachers and administrators preview a lesson and pick lessons; only a learner's launch records. */
export function isStaff(roles: readonly LtiRole[]): boolean {
  return roles.includes('instructor') || roles.includes('administrator')
}

/** A launch that works through a lesson as a student: a learner and nothing more. */
export function isLearnerOnly(roles: readonly LtiRole[]): boolean {
  return roles.includes('learner') && !isStaff(roles)
}
