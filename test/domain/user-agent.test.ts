/** The browser families the Account page shows: the family and the system, never a version. */
import { describe, expect, it } from 'vitest'
import { browserFamily, clientFamily } from '../../src/domain/user-agent.js'

describe('browserFamily', () => {
  it.each([
    ['Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 Chrome/131.0 Safari/537.36', 'Chrome on Windows'],
    ['Mozilla/5.0 (Windows NT 10.0) AppleWebKit/537.36 Chrome/131.0 Safari/537.36 Edg/131.0', 'Edge on Windows'],
    ['Mozilla/5.0 (X11; Linux x86_64; rv:140.0) Gecko/20100101 Firefox/140.0', 'Firefox on Linux'],
    [
      'Mozilla/5.0 (Macintosh; Intel Mac OS X 14_5) AppleWebKit/605.1.15 Version/17.5 Safari/605.1.15',
      'Safari on macOS',
    ],
    [
      'Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 Version/17.5 Safari/604.1',
      'Safari on iOS',
    ],
    ['Mozilla/5.0 (Linux; Android 14) AppleWebKit/537.36 Chrome/131.0 Mobile Safari/537.36', 'Chrome on Android'],
    ['Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 HeadlessChrome/140.0 Safari/537.36', 'Chrome on Linux'],
    ['curl/8.5.0', 'curl'],
    ['something-new/1.0', 'Another browser'],
    ['', 'Unknown browser'],
    [null, 'Unknown browser'],
  ])('names %j as %s', (userAgent, family) => {
    expect(browserFamily(userAgent)).toBe(family)
  })
})

describe('the client family of an API request', () => {
  it.each([
    ['curl/8.5.0', 'curl'],
    ['python-requests/2.32.3', 'Python requests'],
    ['Python-urllib/3.11', 'Python urllib'],
    ['node', 'Node.js'],
    ['axios/1.7.9', 'axios'],
    ['Go-http-client/1.1', 'Go'],
    ['PostmanRuntime/7.43.0', 'Postman'],
    ['Mozilla/5.0 (X11; Linux x86_64; rv:140.0) Gecko/20100101 Firefox/140.0', 'Firefox on Linux'],
    ['our-sync-job/4.2', 'another client'],
    ['', 'no user agent'],
    [undefined, 'no user agent'],
  ])('names %j as %s', (userAgent, family) => {
    expect(clientFamily(userAgent)).toBe(family)
  })
})
