/**
 * Every curl example a partner is shown runs as pasted and gives the status it documents: the
 * README's, the demo banner's, the API reference's (/docs) and the dashboard welcome page's.
 * One built server (dist/server.js) on an empty database, as after `npm start`; each example
 * runs through bash and curl, with only the variables its page tells the reader to set:
 *
 * - README: `KEY`, `STUDENT_KEY`, `ID`, from the line the demo banner prints for it. The README
 *   writes the default address, http://localhost:3000; here the server has a free port instead.
 * - /docs: `API_KEY` and `STUDENT_ID`, from a partner's first test key (welcome page) and a
 *   student of their sandbox (overview), which is where the page sends the reader.
 * - The demo banner and the welcome page: none; their examples carry the key themselves.
 */
import { mkdtempSync, readFileSync } from 'node:fs'
import net from 'node:net'
import os from 'node:os'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { CATALOG_DIR, tempDir } from '../helper.js'
import { ROOT, type RunningServer, startServer } from '../server/process.js'
import { BrowserClient, type Page } from './browser-client.js'
import { type ExampleRun, failureReport, runExample } from './run-example.js'
import { curlCommandsOfText, examplesOfHtml, examplesOfMarkdown, type ShellExample } from './shell-examples.js'

/** A port nothing listens on now; the README's examples get it in place of 3000. */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = net.createServer()
    probe.once('error', reject)
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as net.AddressInfo
      probe.close(() => resolve(port))
    })
  })
}

async function runAll(examples: ShellExample[], variables: Record<string, string>): Promise<ExampleRun[]> {
  const home = mkdtempSync(path.join(os.tmpdir(), 'examples-home-'))
  const runs: ExampleRun[] = []
  // One at a time, in page order: the ETag example's two requests, or a tier set then read, keep their order.
  for (const example of examples) runs.push(await runExample(example, variables, home))
  return runs
}

function summary(source: string, runs: ExampleRun[]): string {
  const failed = runs.filter((run) => run.failure !== undefined).length
  return `${source}: ${runs.length} examples, ${runs.length - failed} as documented, ${failed} not`
}

describe('every curl example runs as pasted', () => {
  let server: RunningServer | undefined
  let port: number
  let banner = ''
  let welcome: Page
  let overview: Page
  let testKey: string
  let sandboxStudent: string

  beforeAll(async () => {
    port = await freePort()
    server = await startServer({ DATABASE_URL: `sqlite:${path.join(tempDir(), 'examples.db')}`, CATALOG_DIR, PORT: String(port) })
    banner = server.output()
    // A partner's first minutes, as in a browser: sign up, sign in, the welcome page, the overview.
    const browser = new BrowserClient(server.baseUrl)
    const credentials = { email: 'examples@partner.example', password: 'a long and memorable phrase' }
    const signedUp = await browser.submit(await browser.get('/dashboard/signup'), '/dashboard/signup', credentials)
    expect(signedUp.url).toContain('/dashboard/login')
    welcome = await browser.submit(signedUp, '/dashboard/login', credentials)
    expect(welcome.status, welcome.body).toBe(201)
    testKey = /id="new-key"[^>]*value="(cur_test_\w+)"/.exec(welcome.body)?.[1] ?? ''
    expect(testKey).not.toBe('')
    overview = await browser.get('/dashboard/partner')
    sandboxStudent = /<td><code>([0-9a-f-]{36})<\/code><\/td>/.exec(overview.body)?.[1] ?? ''
    expect(sandboxStudent).not.toBe('')
  })

  afterAll(async () => {
    await server?.stop()
  })

  it('README: every curl example gives its documented status with the variables the demo banner sets', async () => {
    const exportLine = /^\s*(export KEY=\S+ STUDENT_KEY=\S+ ID=\S+)\s*$/m.exec(banner)?.[1]
    expect(exportLine, `the demo banner prints no "export KEY=... STUDENT_KEY=... ID=..." line:\n${banner}`).toBeDefined()
    const variables = Object.fromEntries(exportLine!.replace(/^export /, '').split(' ').map((pair) => pair.split('=') as [string, string]))
    const readme = readFileSync(path.join(ROOT, 'README.md'), 'utf8')
    const examples = examplesOfMarkdown(readme, 'README.md').map((example) => ({
      ...example,
      script: example.script.replaceAll('localhost:3000', `localhost:${port}`),
    }))
    // Catalog reads, the ETag round trip, a student's progress and setting a tier at least.
    expect(examples.length).toBeGreaterThanOrEqual(6)
    expect(examples.some((example) => example.expected === 304)).toBe(true)
    const runs = await runAll(examples, variables)
    console.info(summary('README.md', runs))
    expect(failureReport(runs)).toBe('')
  })

  it('demo banner: its curl commands work as printed', async () => {
    const runs = await runAll(curlCommandsOfText(banner, 'demo banner'), {})
    expect(runs.length).toBeGreaterThanOrEqual(2)
    console.info(summary('demo banner', runs))
    expect(failureReport(runs)).toBe('')
  })

  it('/docs: every example gives its documented status with API_KEY and STUDENT_ID set as the page says', async () => {
    const page = await (await fetch(`${server!.baseUrl}/docs`)).text()
    // The page names the variables and where a partner's values come from.
    expect(page).toMatch(/export API_KEY=/)
    expect(page).toMatch(/export STUDENT_ID=/)
    const examples = examplesOfHtml(page, '/docs')
    const document = (await (await fetch(`${server!.baseUrl}/api/v1/openapi.json`)).json()) as { paths: Record<string, object> }
    const operations = Object.values(document.paths).flatMap((item) => Object.keys(item))
    expect(examples).toHaveLength(operations.length)
    const runs = await runAll(examples, { API_KEY: testKey, STUDENT_ID: sandboxStudent })
    console.info(summary('/docs', runs))
    expect(failureReport(runs)).toBe('')
  })

  it('dashboard welcome page: every curl example, the reference included, works as pasted', async () => {
    const examples = [...examplesOfHtml(welcome.body, 'welcome page'), ...examplesOfHtml(overview.body, 'overview page')]
    // "Try it" (catalog, progress, enroll) and the reference's examples.
    expect(examples.length).toBeGreaterThanOrEqual(3)
    const runs = await runAll(examples, {})
    console.info(summary('dashboard', runs))
    expect(failureReport(runs)).toBe('')
  })
})
