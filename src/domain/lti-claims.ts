/**
 * The names LTI 1.3 Core, Deep Linking 2.0, Assignment and Grade Services 2.0 and Dynamic
 * Registration 1.0 give their claims, messages, roles and scopes: written once here, so a typo
 * cannot make a claim silently absent.
 */
const LTI = 'https://purl.imsglobal.org/spec/lti/claim/'
const DL = 'https://purl.imsglobal.org/spec/lti-dl/claim/'

export const CLAIM = {
  messageType: `${LTI}message_type`,
  version: `${LTI}version`,
  deploymentId: `${LTI}deployment_id`,
  targetLinkUri: `${LTI}target_link_uri`,
  resourceLink: `${LTI}resource_link`,
  roles: `${LTI}roles`,
  context: `${LTI}context`,
  custom: `${LTI}custom`,
  lis: `${LTI}lis`,
  launchPresentation: `${LTI}launch_presentation`,
  toolPlatform: `${LTI}tool_platform`,
  ags: 'https://purl.imsglobal.org/spec/lti-ags/claim/endpoint',
  deepLinkingSettings: `${DL}deep_linking_settings`,
  contentItems: `${DL}content_items`,
  deepLinkingData: `${DL}data`,
  deepLinkingMessage: `${DL}msg`,
} as const

export const LTI_VERSION = '1.3.0'

export const MESSAGE = {
  resourceLink: 'LtiResourceLinkRequest',
  deepLinkingRequest: 'LtiDeepLinkingRequest',
  deepLinkingResponse: 'LtiDeepLinkingResponse',
} as const

export const AGS_SCOPE = {
  lineItem: 'https://purl.imsglobal.org/spec/lti-ags/scope/lineitem',
  lineItemReadOnly: 'https://purl.imsglobal.org/spec/lti-ags/scope/lineitem.readonly',
  result: 'https://purl.imsglobal.org/spec/lti-ags/scope/result.readonly',
  score: 'https://purl.imsglobal.org/spec/lti-ags/scope/score',
} as const

/** What the tool asks of a platform: line items (one per lesson placed) and scores; no roster. */
export const TOOL_SCOPES: readonly string[] = [AGS_SCOPE.lineItem, AGS_SCOPE.score]

export const SCORE_MEDIA_TYPE = 'application/vnd.ims.lis.v1.score+json'

/** Dynamic Registration's members of the platform's configuration and of the tool's. */
export const PLATFORM_CONFIGURATION = 'https://purl.imsglobal.org/spec/lti-platform-configuration'
export const TOOL_CONFIGURATION = 'https://purl.imsglobal.org/spec/lti-tool-configuration'

/** The LIS role vocabulary: context roles (membership#) and the institution roles platforms also send. */
const MEMBERSHIP = 'http://purl.imsglobal.org/vocab/lis/v2/membership#'
const INSTITUTION = 'http://purl.imsglobal.org/vocab/lis/v2/institution/person#'
const SYSTEM = 'http://purl.imsglobal.org/vocab/lis/v2/system/person#'

export const ROLE = {
  learner: `${MEMBERSHIP}Learner`,
  instructor: `${MEMBERSHIP}Instructor`,
  contentDeveloper: `${MEMBERSHIP}ContentDeveloper`,
  teachingAssistant: `${MEMBERSHIP}Instructor#TeachingAssistant`,
  administrator: `${MEMBERSHIP}Administrator`,
  institutionAdministrator: `${INSTITUTION}Administrator`,
  institutionInstructor: `${INSTITUTION}Faculty`,
  institutionStudent: `${INSTITUTION}Student`,
  systemAdministrator: `${SYSTEM}Administrator`,
} as const
