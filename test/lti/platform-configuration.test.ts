/**
 * The checks of a platform's OpenID configuration, with the real platforms' host names: hosted
 * Canvas's issuer is https://canvas.instructure.com while its endpoints are on sso.canvaslms.com,
 * and that is accepted; an issuer on another host than its configuration is not.
 */
import { describe, expect, it } from 'vitest'
import { readPlatformConfiguration } from '../../src/platforms/platform-registration.js'

const CANVAS_CONFIGURATION_URL = 'https://canvas.instructure.com/api/lti/security/openid-configuration'

const canvas = {
  issuer: 'https://canvas.instructure.com',
  authorization_endpoint: 'https://sso.canvaslms.com/api/lti/authorize_redirect',
  registration_endpoint: 'https://canvas.instructure.com/api/lti/registrations',
  jwks_uri: 'https://sso.canvaslms.com/api/lti/security/jwks',
  token_endpoint: 'https://sso.canvaslms.com/login/oauth2/token',
  token_endpoint_auth_methods_supported: ['private_key_jwt'],
  id_token_signing_alg_values_supported: ['RS256'],
  authorization_server: 'canvas.instructure.com',
  'https://purl.imsglobal.org/spec/lti-platform-configuration': { product_family_code: 'canvas', version: 'vCloud' },
}

describe('a platform configuration', () => {
  it('accepts hosted Canvas: the issuer on the configuration’s host, the endpoints on another', () => {
    expect(readPlatformConfiguration(canvas, CANVAS_CONFIGURATION_URL, false)).toEqual({
      ok: true,
      value: {
        issuer: 'https://canvas.instructure.com',
        authorizationEndpoint: 'https://sso.canvaslms.com/api/lti/authorize_redirect',
        tokenEndpoint: 'https://sso.canvaslms.com/login/oauth2/token',
        jwksUri: 'https://sso.canvaslms.com/api/lti/security/jwks',
        registrationEndpoint: 'https://canvas.instructure.com/api/lti/registrations',
        authorizationServer: 'canvas.instructure.com',
        product: 'canvas',
      },
    })
  })

  it('refuses an issuer on another host than the configuration came from', () => {
    const elsewhere = 'https://district.example.org/.well-known/openid-configuration'
    expect(readPlatformConfiguration(canvas, elsewhere, false)).toEqual({
      ok: false,
      problem:
        'its issuer https://canvas.instructure.com is not on district.example.org, where the configuration came from',
    })
    // A port is part of the host: another service of the same machine is another platform.
    expect(
      readPlatformConfiguration(canvas, 'https://canvas.instructure.com:8443/openid-configuration', false).ok,
    ).toBe(false)
  })

  it('refuses loopback and plain http unless allowed, and private addresses always', () => {
    const local = { ...canvas, issuer: 'http://127.0.0.1:8080', token_endpoint: 'http://localhost:8080/token' }
    expect(readPlatformConfiguration(local, 'http://127.0.0.1:8080/config', false).ok).toBe(false)
    expect(readPlatformConfiguration(local, 'http://127.0.0.1:8080/config', true).ok).toBe(true)
    for (const token_endpoint of ['https://10.0.0.8/token', 'https://[fd00::1]/token', 'https://169.254.169.254/t']) {
      const verdict = readPlatformConfiguration({ ...canvas, token_endpoint }, CANVAS_CONFIGURATION_URL, true)
      expect(verdict.ok, token_endpoint).toBe(false)
    }
  })

  it('needs every endpoint, and RS256 and private_key_jwt when it lists what it supports', () => {
    for (const name of ['authorization_endpoint', 'token_endpoint', 'jwks_uri', 'registration_endpoint']) {
      const verdict = readPlatformConfiguration({ ...canvas, [name]: undefined }, CANVAS_CONFIGURATION_URL, false)
      expect(verdict).toEqual({ ok: false, problem: `it has no ${name}` })
    }
    const hs256 = { ...canvas, id_token_signing_alg_values_supported: ['HS256'] }
    expect(readPlatformConfiguration(hs256, CANVAS_CONFIGURATION_URL, false).ok).toBe(false)
    const { token_endpoint_auth_methods_supported: _, ...unlisted } = canvas
    expect(readPlatformConfiguration(unlisted, CANVAS_CONFIGURATION_URL, false).ok).toBe(true)
  })
})
