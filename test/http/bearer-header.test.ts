/**
 * The Authorization header's key: the one-test shortcut for "Bearer <key>" must read every header
 * as the general parse (RFC 6750 scheme, any case, spaces) followed by the key-shape check does.
 */
import { describe, expect, it } from 'vitest'
import { generateApiKey, hasApiKeyShape, hashApiKey } from '../../src/domain/api-key.js'
import { keyHashOf } from '../../src/http/admission.js'

const live = generateApiKey('live').key
const test = generateApiKey('test').key

/** The rules spelled out once more, without the shortcut. */
function generalParse(header: string | undefined): string {
  if (header === undefined) return 'api_key_missing'
  const token = /^bearer +([A-Za-z0-9\-._~+/]+=*) *$/i.exec(header)?.[1]
  if (token === undefined) return /^bearer\b/i.test(header) ? 'api_key_invalid' : 'api_key_missing'
  return hasApiKeyShape(token) ? hashApiKey(token) : 'api_key_invalid'
}

describe('keyHashOf', () => {
  const headers = [
    undefined,
    '',
    `Bearer ${live}`,
    `Bearer ${test}`,
    `bearer ${live}`,
    `BEARER ${live}`,
    `Bearer  ${live}`,
    `Bearer ${live} `,
    ` Bearer ${live}`,
    `Bearer ${live}x`,
    `Bearer ${live.slice(0, -1)}`,
    `Bearer ${live.replace('cur_live_', 'cur_prod_')}`,
    `Bearer ${live.replace('cur_', 'CUR_')}`,
    `Bearer ${live.slice(0, -1)}-`,
    `Bearer\t${live}`,
    `Bearer ${live}\n`,
    `Basic ${live}`,
    'Bearer',
    'Bearer ',
    `Token ${live}`,
  ]
  it.each(headers.map((header) => [JSON.stringify(header), header]))(
    'reads %s as the general parse does',
    (_, header) => {
      const read = keyHashOf(header)
      expect(typeof read === 'string' ? read : read.hash).toBe(generalParse(header))
      if (typeof read !== 'string') expect(hashApiKey(read.token)).toBe(read.hash)
    },
  )
})
