/**
 * A client that keeps writing a body the service refused still reads the refusal: with Node's
 * fetch (bodies with a length and chunked, one after another) and with curl (with and without
 * `Expect: 100-continue`). Real sockets.
 */
import { execFile } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import { promisify } from 'node:util'
import { beforeAll, describe, expect, it } from 'vitest'
import { buildTestApp, STUDENTS, tempDir } from '../helper.js'
import { perSuite } from '../support/built.js'

const run = promisify(execFile)
const BIG = JSON.stringify({ tier: 'builder', pad: 'x'.repeat(2_000_000) })

/** Sends the bodies one after another on fetch's kept-alive connections; prints one line each. */
const CLIENT = `
const [url, key] = process.argv.slice(1)
const chunked = (bytes) => new ReadableStream({ start(c) { for (let at = 0; at < bytes.length; at += 65536) c.enqueue(bytes.subarray(at, at + 65536)); c.close() } })
for (const size of [2000000, 20000000]) {
  const bytes = new TextEncoder().encode(JSON.stringify({ tier: 'builder', pad: 'x'.repeat(size) }))
  for (const mode of ['length', 'chunked']) for (let i = 0; i < 4; i++) {
    try {
      const response = await fetch(url, { method: 'POST', duplex: 'half', headers: { 'content-type': 'application/json', authorization: 'Bearer ' + key }, body: mode === 'length' ? bytes : chunked(bytes) })
      console.log(size, mode, response.status, (await response.json()).code)
    } catch (error) { console.log(size, mode, error.cause?.code ?? error.message) }
  }
}
`

describe('a refused body still gets its answer', () => {
  const t = perSuite(() => buildTestApp())
  let base: string
  let url: string
  beforeAll(async () => {
    base = t.base
    url = `${base}/api/v1/students/${STUDENTS.ada}/enroll`
  })

  /** curl's POST of an enroll with the read-write key; `args` say what to send and print. */
  async function curlEnroll(args: string[], options: { timeout?: number } = {}): Promise<string> {
    const auth = `Authorization: Bearer ${t.fixtures.keys.readWrite}`
    const { stdout } = await run(
      'curl',
      ['-s', '-o', '/dev/null', '-X', 'POST', '-H', auth, '-H', 'Content-Type: application/json', ...args, url],
      options,
    )
    return stdout
  }

  it('Node fetch in another process, 2 MB and 20 MB bodies with a length and chunked, four of each in a row: every one answered 413', async () => {
    // The client runs in a process of its own: in the server's process its writes and the
    // server's reads would take turns on one event loop, and the race would never show.
    const { stdout } = await run(
      process.execPath,
      ['--input-type=module', '-e', CLIENT, url, t.fixtures.keys.readWrite],
      { maxBuffer: 1 << 20 },
    )
    const answers = stdout.trim().split('\n')
    const expected = [2_000_000, 20_000_000].flatMap((size) =>
      ['length', 'chunked'].flatMap((mode) => Array(4).fill(`${size} ${mode} 413 payload_too_large`)),
    )
    expect(answers).toEqual(expected)
    // Nothing was enrolled on the way.
    const ada = await t.storage.db
      .selectFrom('students')
      .select('tier')
      .where('id', '=', STUDENTS.ada)
      .executeTakeFirstOrThrow()
    expect(ada.tier).toBe('explorer')
  })

  it('curl, with and without Expect: 100-continue: 413 problem+json', async () => {
    const file = path.join(tempDir(), 'big.json')
    fs.writeFileSync(file, BIG)
    for (const expectHeader of ['Expect: 100-continue', 'Expect:']) {
      const stdout = await curlEnroll([
        '-w',
        '%{http_code} %{content_type}',
        '-H',
        expectHeader,
        '--data-binary',
        `@${file}`,
      ])
      expect(stdout, expectHeader).toBe('413 application/problem+json; charset=utf-8')
    }
  })

  it('curl, a small chunked body with Expect: 100-continue: invited at once and served', async () => {
    // With a 20 s wait for "100 Continue", a body that is not invited would time the test out.
    const stdout = await curlEnroll(
      [
        '-w',
        '%{http_code}',
        '--expect100-timeout',
        '20',
        '-H',
        'Transfer-Encoding: chunked',
        '-H',
        'Expect: 100-continue',
        '--data-binary',
        '{"tier":"explorer"}',
      ],
      { timeout: 10_000 },
    )
    expect(stdout).toBe('200')
  })
})
