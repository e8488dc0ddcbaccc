/**
 * A launch's roles reduced to learner, instructor and administrator: context roles, their
 * sub-roles (written either way platforms write them), institution and system roles, short names;
 * anything else dropped. And which of the tool's URLs a link may point at.
 */
import { describe, expect, it } from 'vitest'
import { ROLE } from '../../src/domain/lti-claims.js'
import { isLoopbackHost, isToolUrl } from '../../src/domain/lti-launch.js'
import { isLearnerOnly, isStaff, reducedRoles } from '../../src/domain/lti-roles.js'

const LIS = 'http://purl.imsglobal.org/vocab/lis/v2/'

describe('LTI roles', () => {
  it('reduces every way of saying learner, instructor or administrator, and drops the rest', () => {
    expect(reducedRoles([ROLE.learner])).toEqual(['learner'])
    expect(reducedRoles([ROLE.institutionStudent])).toEqual(['learner'])
    expect(reducedRoles(['Learner'])).toEqual(['learner'])
    expect(reducedRoles([`${LIS}membership/Instructor#TeachingAssistant`])).toEqual(['instructor'])
    expect(reducedRoles([ROLE.teachingAssistant])).toEqual(['instructor'])
    expect(reducedRoles([ROLE.contentDeveloper, ROLE.institutionInstructor])).toEqual(['instructor'])
    expect(reducedRoles([ROLE.systemAdministrator, `${LIS}system/person#SysAdmin`])).toEqual(['administrator'])
    expect(reducedRoles([ROLE.administrator, ROLE.learner, ROLE.instructor, ROLE.learner])).toEqual([
      'learner',
      'instructor',
      'administrator',
    ])
    expect(reducedRoles([`${LIS}membership#Mentor`, `${LIS}membership#Guest`, 'Member', 7, null, {}])).toEqual([])
    expect(reducedRoles('Learner')).toEqual([])
    expect(reducedRoles(undefined)).toEqual([])
  })

  it('treats a launch as a learner’s only without a teacher’s or administrator’s role', () => {
    expect(isLearnerOnly(['learner'])).toBe(true)
    expect(isLearnerOnly(['learner', 'instructor'])).toBe(false)
    expect(isLearnerOnly([])).toBe(false)
    expect(isStaff(['administrator'])).toBe(true)
    expect(isStaff(['learner'])).toBe(false)
  })

  it('knows the tool’s own LTI URLs and this machine’s host names', () => {
    expect(isToolUrl('https://tool.example', 'https://tool.example/lti/launch')).toBe(true)
    expect(isToolUrl('https://tool.example/sub', 'https://tool.example/sub/lti/launch')).toBe(true)
    expect(isToolUrl('https://tool.example/sub', 'https://tool.example/lti/launch')).toBe(false)
    expect(isToolUrl('https://tool.example', 'https://tool.example/lti/../dashboard')).toBe(false)
    expect(isToolUrl('https://tool.example', 'http://tool.example/lti/launch')).toBe(false)
    expect(isToolUrl('https://tool.example', 'https://tool.example:444/lti/launch')).toBe(false)
    expect(isToolUrl('https://tool.example', 42)).toBe(false)
    expect(['localhost', '127.0.0.1', '127.9.8.7', '[::1]'].every(isLoopbackHost)).toBe(true)
    expect(['tool.example', '10.0.0.1', '127.0.0.1.example', 'localhost.example'].some(isLoopbackHost)).toBe(false)
  })
})
