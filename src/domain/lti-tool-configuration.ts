/**
 * What the tool tells a learning platform about itself (docs/lti.md#registration): the body of a
 * Dynamic Registration 1.0 request, the same values as JSON for platforms that paste one, and
 * Canvas's developer-key JSON. Every URL is made from PUBLIC_URL, so the three never disagree.
 *
 * The tool asks for the least it needs: the claims `iss`, `sub` and `given_name` (a first name,
 * docs/childrens-data.md), line items and scores and no roster scope, and Canvas's `name_only`
 * privacy level (Canvas's own extension; without it Canvas sends no name at all).
 */
import { MESSAGE, TOOL_CONFIGURATION, TOOL_SCOPES } from './lti-claims.js'

/** The name a platform shows its administrators. */
export const TOOL_NAME = 'Curriculum lessons'
export const TOOL_DESCRIPTION = 'Lessons with slides, quizzes and activities; progress goes to the gradebook.'

/** The launch claims the tool asks for: nothing that names a child beyond a first name. */
export const TOOL_CLAIMS: readonly string[] = ['iss', 'sub', 'given_name']

/** Canvas's key for its privacy level inside the tool configuration (Canvas doc/api/registration.md). */
export const CANVAS_PRIVACY_LEVEL = 'https://canvas.instructure.com/lti/privacy_level'

/** Canvas placements that start a deep-linking request: a module item, an assignment. */
export const CANVAS_DEEP_LINKING_PLACEMENTS: readonly string[] = ['link_selection', 'assignment_selection']

const DEEP_LINKING_LABEL = 'Add a Curriculum lesson'

export interface ToolUrls {
  /** PUBLIC_URL without a trailing slash. */
  base: string
  /** `domain` of the tool configuration: PUBLIC_URL's host (and port, when not the default). */
  domain: string
  login: string
  launch: string
  jwks: string
  /** Where a platform's administrator opens a registration URL: `/lti/register/<token>`. */
  registration: (token: string) => string
}

export function toolUrls(publicUrl: string): ToolUrls {
  const base = publicUrl.replace(/\/+$/, '')
  return {
    base,
    domain: new URL(base).host,
    login: `${base}/lti/login`,
    launch: `${base}/lti/launch`,
    jwks: `${base}/lti/jwks`,
    registration: (token) => `${base}/lti/register/${token}`,
  }
}

/** The `https://purl.imsglobal.org/spec/lti-tool-configuration` member of a registration. */
export function toolConfiguration(urls: ToolUrls): Record<string, unknown> {
  return {
    domain: urls.domain,
    target_link_uri: urls.launch,
    description: TOOL_DESCRIPTION,
    claims: [...TOOL_CLAIMS],
    messages: [
      { type: MESSAGE.resourceLink, target_link_uri: urls.launch },
      {
        type: MESSAGE.deepLinkingRequest,
        target_link_uri: urls.launch,
        label: DEEP_LINKING_LABEL,
        placements: [...CANVAS_DEEP_LINKING_PLACEMENTS],
      },
    ],
    [CANVAS_PRIVACY_LEVEL]: 'name_only',
  }
}

/**
 * The body of a Dynamic Registration request (section 3.3: OpenID Connect client metadata and
 * the LTI tool configuration); GET /lti/configuration.json serves the same object.
 */
export function registrationRequest(publicUrl: string): Record<string, unknown> {
  const urls = toolUrls(publicUrl)
  return {
    application_type: 'web',
    response_types: ['id_token'],
    grant_types: ['implicit', 'client_credentials'],
    initiate_login_uri: urls.login,
    redirect_uris: [urls.launch],
    client_name: TOOL_NAME,
    jwks_uri: urls.jwks,
    token_endpoint_auth_method: 'private_key_jwt',
    scope: TOOL_SCOPES.join(' '),
    [TOOL_CONFIGURATION]: toolConfiguration(urls),
  }
}

/**
 * Canvas's developer-key JSON ("Paste JSON" or "Enter URL" of an LTI key; Canvas
 * doc/api/lti_dev_key_config.md). Canvas takes the redirect URIs in a field of their own.
 */
export function canvasConfiguration(publicUrl: string): Record<string, unknown> {
  const urls = toolUrls(publicUrl)
  return {
    title: TOOL_NAME,
    description: TOOL_DESCRIPTION,
    oidc_initiation_url: urls.login,
    target_link_uri: urls.launch,
    public_jwk_url: urls.jwks,
    scopes: [...TOOL_SCOPES],
    extensions: [
      {
        domain: urls.domain,
        platform: 'canvas.instructure.com',
        privacy_level: 'name_only',
        settings: {
          text: TOOL_NAME,
          placements: CANVAS_DEEP_LINKING_PLACEMENTS.map((placement) => ({
            placement,
            message_type: MESSAGE.deepLinkingRequest,
            target_link_uri: urls.launch,
            text: DEEP_LINKING_LABEL,
          })),
        },
      },
    ],
  }
}
