/**
 * What each role of an organisation may do: an owner everything, a developer the technical work
 * (keys, webhooks, test data) without the members, the agreements or the attestation, a viewer
 * only reading, and someone who is no member nothing.
 */
import { describe, expect, it } from 'vitest'
import { MEMBER_ROLES, type MemberAction, may, memberRole } from '../../src/domain/member-roles.js'

const ACTIONS: readonly MemberAction[] = [
  'organisation.read',
  'keys.manage',
  'webhooks.manage',
  'test-data.manage',
  'members.manage',
  'agreements.contacts',
  'deletion.attest',
  'organisation.settings',
  'lti.read',
]

describe('may', () => {
  it('gives each role its actions, and no one outside the organisation any', () => {
    const allowed = (role: (typeof MEMBER_ROLES)[number] | undefined) => ACTIONS.filter((action) => may(role, action))
    expect(allowed('owner')).toEqual(ACTIONS)
    expect(allowed('developer')).toEqual(['organisation.read', 'keys.manage', 'webhooks.manage', 'test-data.manage'])
    expect(allowed('viewer')).toEqual(['organisation.read'])
    expect(allowed(undefined)).toEqual([])
  })

  it('reads a role from a form, and nothing else', () => {
    for (const role of MEMBER_ROLES) expect(memberRole(role)).toBe(role)
    for (const other of ['Owner', 'admin', '', 'operator', 'toString']) expect(memberRole(other)).toBeUndefined()
  })
})
