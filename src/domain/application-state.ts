/**
 * The lifecycle of an access application and of the organisation it creates:
 *
 *   application:   submitted -> approved | rejected         (final once decided)
 *   organisation:  active <-> suspended                      (only approved ones exist)
 *
 * Every change goes through `transition`, which refuses an illegal one with a message a person
 * can act on.
 */
export type ApplicationState = 'submitted' | 'approved' | 'rejected'
export type OrganisationStatus = 'active' | 'suspended'

export type ApplicationEvent = 'approve' | 'reject'
export type OrganisationEvent = 'suspend' | 'reinstate'

export class IllegalTransition extends Error {
  override name = 'IllegalTransition'
}

const APPLICATION: Record<ApplicationState, Partial<Record<ApplicationEvent, ApplicationState>>> = {
  submitted: { approve: 'approved', reject: 'rejected' },
  approved: {},
  rejected: {},
}

const ORGANISATION: Record<OrganisationStatus, Partial<Record<OrganisationEvent, OrganisationStatus>>> = {
  active: { suspend: 'suspended' },
  suspended: { reinstate: 'active' },
}

export function nextApplicationState(from: ApplicationState, event: ApplicationEvent): ApplicationState {
  const to = APPLICATION[from][event]
  if (to === undefined)
    throw new IllegalTransition(
      `This application is already ${from}; it cannot be ${event === 'approve' ? 'approved' : 'rejected'} now.`,
    )
  return to
}

export function nextOrganisationStatus(from: OrganisationStatus, event: OrganisationEvent): OrganisationStatus {
  const to = ORGANISATION[from][event]
  if (to === undefined) {
    throw new IllegalTransition(
      event === 'suspend'
        ? 'This organisation is already suspended.'
        : 'This organisation is not suspended; there is nothing to reinstate.',
    )
  }
  return to
}

export function isApplicationState(value: string): value is ApplicationState {
  return value === 'submitted' || value === 'approved' || value === 'rejected'
}
