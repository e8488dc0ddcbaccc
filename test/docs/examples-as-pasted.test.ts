/**
 * Every curl example a partner is shown runs as pasted and gives the status it documents: the
 * README's, the demo banner's, the API reference's (/docs) and the dashboard welcome page's.
 * One built server (dist/server.js) on an empty database, as after `npm start`; each example
 * runs through bash and curl, with only the variables its page tells the reader to set:
 *
 * - README: `KEY`, `STUDENT_KEY`, `ID`: the demo's keys and student, which the banner prints under
 *   those names too. The README writes the default address, http://localhost:3000; here the
 *   server has a free port instead.
 * - /docs: `API_KEY` and `STUDENT_ID`, from a partner's first test key (welcome page) and a
 *   student of their sandbox (overview), which is where the page sends the reader.
 * - The demo banner and the welcome page: none; their examples carry the key themselves.
 *
 * An example with a `<...>` placeholder fails as not runnable as pasted. The status expected is
 * a 2xx unless the example shows another (`# HTTP/1.1 304 Not Modified`). Every failing example
 * of every source is listed, with its status and the body it got.
 */
import { mkdtempSync, readFileSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { CATALOG_DIR, tempDir } from '../helper.js'
import { ROOT, startServer } from '../server/process.js'
import { freePort } from '../support/services.js'
import { BrowserClient, type Page } from './browser-client.js'
import { type ExampleRun, failureReport, runExample } from './run-example.js'
import { curlCommandsOfText, examplesOfHtml, examplesOfMarkdown, type ShellExample } from './shell-examples.js'

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

/** A partner's first minutes, as in a browser: sign up, sign in (the welcome page), the overview. */
async function partnerPages(
  baseUrl: string,
): Promise<{ welcome: Page; overview: Page; testKey: string; sandboxStudent: string }> {
  const browser = new BrowserClient(baseUrl)
  const credentials = { email: 'examples@partner.example', password: 'a long and memorable phrase' }
  const signedUp = await browser.submit(await browser.get('/dashboard/signup'), '/dashboard/signup', credentials)
  expect(signedUp.url).toContain('/dashboard/login')
  const welcome = await browser.submit(signedUp, '/dashboard/login', credentials)
  // The key is shown on a page of its own, reached by a redirect after the sign-in (a reload keeps it).
  expect(welcome.status, welcome.body).toBe(200)
  expect(welcome.url).toContain('/dashboard/partner/keys/shown/')
  const testKey = /id="new-key"[^>]*value="(cur_test_\w+)"/.exec(welcome.body)?.[1]
  const overview = await browser.get('/dashboard/partner')
  const sandboxStudent = /<td><code>([0-9a-f-]{36})<\/code><\/td>/.exec(overview.body)?.[1]
  expect(testKey).toBeDefined()
  expect(sandboxStudent).toBeDefined()
  return { welcome, overview, testKey: testKey!, sandboxStudent: sandboxStudent! }
}

/**
 * The examples of the README and the API guide, with the demo's values under the names the
 * README gives them.
 */
async function readmeRuns(banner: string, port: number): Promise<ExampleRun[]> {
  const variables = {
    KEY: /Demo catalog key[^\n]*\n\s+(cur_live_\w+)/.exec(banner)?.[1] ?? '',
    STUDENT_KEY: /Demo student key[^\n]*\n\s+(cur_live_\w+)/.exec(banner)?.[1] ?? '',
    ID: /Demo student: .* id ([0-9a-f-]{36})/.exec(banner)?.[1] ?? '',
  }
  expect
    .soft(banner, "the demo banner prints the README's variables")
    .toContain(`export KEY=${variables.KEY} STUDENT_KEY=${variables.STUDENT_KEY} ID=${variables.ID}`)
  const pages = ['README.md', 'docs/api.md']
  const examples = pages
    .flatMap((page) => examplesOfMarkdown(readFileSync(path.join(ROOT, page), 'utf8'), page))
    .map((example) => ({
      ...example,
      script: example.script.replaceAll('localhost:3000', `localhost:${port}`),
    }))
  // Catalog reads, the ETag round trip, a student's progress and setting a tier at least.
  expect.soft(examples.length, 'README examples').toBeGreaterThanOrEqual(6)
  expect
    .soft(
      examples.some((example) => example.expected === 304),
      'a README example that shows the 304',
    )
    .toBe(true)
  return runAll(examples, variables)
}

/** The reference's examples, with API_KEY and STUDENT_ID set as the page tells the reader. */
async function docsRuns(baseUrl: string, apiKey: string, studentId: string): Promise<ExampleRun[]> {
  const page = await (await fetch(`${baseUrl}/docs`)).text()
  expect.soft(page, '/docs names API_KEY').toMatch(/export API_KEY=/)
  expect.soft(page, '/docs names STUDENT_ID').toMatch(/export STUDENT_ID=/)
  const examples = examplesOfHtml(page, '/docs')
  const document = (await (await fetch(`${baseUrl}/api/v1/openapi.json`)).json()) as { paths: Record<string, object> }
  // One example per operation.
  expect
    .soft(examples.length, '/docs examples')
    .toBe(Object.values(document.paths).flatMap((item) => Object.keys(item)).length)
  return runAll(examples, { API_KEY: apiKey, STUDENT_ID: studentId })
}

describe('the documentation', () => {
  it('every curl example of the README, the demo banner, /docs and the dashboard welcome page gives its documented status as pasted', async () => {
    const port = await freePort()
    const server = await startServer({
      DATABASE_URL: `sqlite:${path.join(tempDir(), 'examples.db')}`,
      CATALOG_DIR,
      PORT: String(port),
    })
    try {
      const banner = server.output()
      const partner = await partnerPages(server.baseUrl)
      const dashboardExamples = [
        ...examplesOfHtml(partner.welcome.body, 'welcome page'),
        ...examplesOfHtml(partner.overview.body, 'overview page'),
      ]
      // "Try it" (catalog, progress, enroll) at least, and the reference's examples.
      expect.soft(dashboardExamples.length, 'dashboard examples').toBeGreaterThanOrEqual(3)
      const sources: [string, ExampleRun[]][] = [
        ['README.md', await readmeRuns(banner, port)],
        ['demo banner', await runAll(curlCommandsOfText(banner, 'demo banner'), {})],
        ['/docs', await docsRuns(server.baseUrl, partner.testKey, partner.sandboxStudent)],
        ['dashboard', await runAll(dashboardExamples, {})],
      ]
      console.info(sources.map(([source, runs]) => summary(source, runs)).join('\n'))
      for (const [source, runs] of sources) {
        expect.soft(runs.length, `${source} examples`).toBeGreaterThanOrEqual(2)
        expect.soft(failureReport(runs), `${source}: examples that do not run as pasted`).toBe('')
      }
    } finally {
      await server.stop()
    }
  })
})
