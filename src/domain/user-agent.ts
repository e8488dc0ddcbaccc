/**
 * A browser and system named from a User-Agent, for people reading a list of their sessions
 * ("Firefox on Windows"), and an API client's family for a key's last use ("Python requests"):
 * the family only, since versions and build strings tell a person nothing.
 */
const BROWSERS: readonly [RegExp, string][] = [
  [/\bEdg(e|A|iOS)?\//, 'Edge'],
  [/\b(OPR|Opera)\//, 'Opera'],
  [/\bFirefox\/|\bFxiOS\//, 'Firefox'],
  [/\b(Headless)?Chrom(e|ium)\/|\bCriOS\//, 'Chrome'],
  [/\bVersion\/[\d.]+.*Safari\//, 'Safari'],
  [/\bcurl\//, 'curl'],
]

const SYSTEMS: readonly [RegExp, string][] = [
  [/\bAndroid\b/, 'Android'],
  [/\b(iPhone|iPad|iPod)\b/, 'iOS'],
  [/\bWindows\b/, 'Windows'],
  [/\bMac OS X\b|\bMacintosh\b/, 'macOS'],
  [/\bCrOS\b/, 'ChromeOS'],
  [/\bLinux\b/, 'Linux'],
]

export function browserFamily(userAgent: string | null): string {
  if (userAgent === null || userAgent.trim() === '') return 'Unknown browser'
  const browser = BROWSERS.find(([pattern]) => pattern.test(userAgent))?.[1] ?? 'Another browser'
  const system = SYSTEMS.find(([pattern]) => pattern.test(userAgent))?.[1]
  return system === undefined ? browser : `${browser} on ${system}`
}

/** HTTP libraries and tools, by the product token they send first. */
const CLIENTS: readonly [RegExp, string][] = [
  [/^curl\//i, 'curl'],
  [/^python-requests\//i, 'Python requests'],
  [/^python-urllib\//i, 'Python urllib'],
  [/^python-httpx\//i, 'Python httpx'],
  [/^(aiohttp|Python\/[\d.]+ aiohttp)\b/i, 'Python aiohttp'],
  [/^node(-fetch)?(\/|$)/i, 'Node.js'],
  [/^undici\b/i, 'Node.js'],
  [/^axios\//i, 'axios'],
  [/^Go-http-client\//, 'Go'],
  [/^okhttp\//i, 'OkHttp'],
  [/^Java\//, 'Java'],
  [/^Ruby\b|^Faraday\b/i, 'Ruby'],
  [/^GuzzleHttp\//i, 'PHP Guzzle'],
  [/^PostmanRuntime\//, 'Postman'],
  [/^insomnia\//i, 'Insomnia'],
  [/^Wget\//i, 'Wget'],
  [/^HTTPie\//i, 'HTTPie'],
  [/^Dart\//, 'Dart'],
  [/^\.NET|^Microsoft\.Net|^System\.Net/i, '.NET'],
]

/** The client family of an API request's User-Agent; a browser by its family; never a version. */
export function clientFamily(userAgent: string | undefined): string {
  if (userAgent === undefined || userAgent.trim() === '') return 'no user agent'
  const client = CLIENTS.find(([pattern]) => pattern.test(userAgent))?.[1]
  if (client !== undefined) return client
  if (/^Mozilla\//.test(userAgent)) return browserFamily(userAgent)
  return 'another client'
}
