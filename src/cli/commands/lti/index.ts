/**
 * `curriculum lti ...`: the LTI tool (docs/lti.md). The registrations are made and activated on
 * the dashboard's LTI page; here they are listed, the tool key is rotated, and a demo platform runs.
 */
import type { Command } from 'commander'
import { defineGroup } from '../../options.js'
import { defineLtiDemoPlatform } from './demo-platform.js'
import { defineLtiKeyRotate } from './key-rotate.js'
import { defineLtiRegistrations } from './registrations.js'

export function defineLti(program: Command): void {
  const lti = defineGroup(
    program,
    'lti',
    'The LTI tool: list the learning platforms registered, rotate the tool key, run a demo platform',
    'curriculum lti registrations --json',
  )
  defineLtiRegistrations(lti)
  defineLtiDemoPlatform(lti)
  const key = defineGroup(lti, 'key', 'The tool’s signing key', 'curriculum lti key rotate')
  defineLtiKeyRotate(key)
}
