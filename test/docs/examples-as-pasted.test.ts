/**
 * Every example a partner is shown runs as pasted and gives the status it documents: curl through
 * `sh`, JavaScript through the `node` on PATH, Python through a python3 that has `requests`. One
 * built server (dist/server.js) on an empty database, as after `npm start`; each example runs with
 * only the variables its page tells the reader to set:
 *
 * - README, docs/*.md and /docs, in every language: `BASE_URL`, `API_KEY` and `STUDENT_ID`, exactly
 *   as the demo banner's `export` line prints them (read from the banner, not rebuilt).
 * - /docs's curl examples again with a partner's first test key (welcome page), a student of their
 *   sandbox (overview) and the page's own `BASE_URL`, which is where the page sends a new partner.
 * - The demo banner and the dashboard's welcome page: none; their examples carry the address and the
 *   key themselves. Of the welcome page's JavaScript and Python, only the student operations' run:
 *   filling the values in changes only the lines that set the three, which those examples all have,
 *   and /docs's run covers the rest of the same code.
 *
 * An example with a `<...>` placeholder fails as not runnable as pasted. The status expected is a
 * 2xx unless the example shows another (`# HTTP/1.1 304 Not Modified`). The examples run at once,
 * a few at a time, each in an empty folder of its own (none relies on another's effect), so the
 * rate limits are raised: a reader pastes a few a minute, this test about 150 in seconds. Every
 * failing example of every source is listed, with its status and what it printed.
 */
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { CATALOG_DIR, tempDir } from '../helper.js'
import { ROOT, startServer } from '../server/process.js'
import { freePort } from '../support/services.js'
import { BrowserClient, type Page } from './browser-client.js'
import {
  type Interpreters,
  type ProgramExample,
  programsOfHtml,
  programsOfMarkdown,
  pythonWithRequests,
  runProgram,
} from './program-examples.js'
import { type ExampleRun, failureReport, runExample } from './run-example.js'
import { curlCommandsOfText, examplesOfHtml, examplesOfMarkdown, type ShellExample } from './shell-examples.js'

/** The variables every example reads, in the banner's order. */
const VARIABLES = ['BASE_URL', 'API_KEY', 'STUDENT_ID']

/** Examples that need what a fresh demo cannot have, and why: counted and named, not run. */
const BEYOND_THE_DEMO = [
  { text: 'certificate.json', why: 'checks a certificate of deletion, which the demo has none of' },
]

/** How many examples run at once: most of each one's time is an interpreter starting, on a CPU. */
const AT_ONCE = 4

type Example = { kind: 'shell'; example: ShellExample } | { kind: 'program'; example: ProgramExample }

interface Source {
  name: string
  examples: Example[]
  variables: Record<string, string>
}

const shell = (examples: ShellExample[]): Example[] => examples.map((example) => ({ kind: 'shell', example }))
const programs = (examples: ProgramExample[]): Example[] => examples.map((example) => ({ kind: 'program', example }))
const textOf = (example: Example) => (example.kind === 'shell' ? example.example.script : example.example.source)

/** Whether a filled-in example sets all three values (a student operation's). */
const usesEveryValue = (example: ProgramExample) => VARIABLES.every((name) => example.source.includes(`${name} =`))

/** The `NAME=value` pairs of the banner's `export` line, in its order. */
function bannerExports(banner: string): Record<string, string> {
  const line = /^\s*export (.+)$/m.exec(banner)?.[1] ?? ''
  return Object.fromEntries(line.split(/\s+/).map((pair) => [pair.split('=')[0]!, pair.slice(pair.indexOf('=') + 1)]))
}

/** Runs `tasks` with at most `limit` under way at once; the results in the tasks' order. */
async function pooled<T>(tasks: (() => Promise<T>)[], limit: number): Promise<T[]> {
  const results: T[] = new Array(tasks.length)
  let next = 0
  const worker = async () => {
    while (next < tasks.length) {
      const index = next++
      results[index] = await tasks[index]!()
    }
  }
  await Promise.all(Array.from({ length: Math.min(limit, tasks.length) }, worker))
  return results
}

function summary(source: string, runs: ExampleRun[], skipped: string[]): string {
  const failed = runs.filter((run) => run.failure !== undefined).length
  const beyond = skipped.length === 0 ? '' : `; not run (${skipped.join('; ')})`
  return `${source}: ${runs.length} examples, ${runs.length - failed} as documented, ${failed} not${beyond}`
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

/** The README's and every docs/ page's examples: curl, JavaScript and Python. */
function markdownExamples(): Example[] {
  const pages = ['README.md', ...readdirSync(path.join(ROOT, 'docs')).filter((name) => name.endsWith('.md'))]
  return pages.flatMap((page) => {
    const file = page === 'README.md' ? page : `docs/${page}`
    const text = readFileSync(path.join(ROOT, file), 'utf8')
    return [...shell(examplesOfMarkdown(text, file)), ...programs(programsOfMarkdown(text, file))]
  })
}

/** What /docs shows: its examples, and the checks that it has one per operation and language. */
async function referenceExamples(baseUrl: string): Promise<{ page: string; curl: ShellExample[]; code: Example[] }> {
  const page = await (await fetch(`${baseUrl}/docs`)).text()
  for (const name of VARIABLES) expect.soft(page, `/docs names ${name}`).toMatch(new RegExp(`export ${name}=`))
  const curl = examplesOfHtml(page, '/docs')
  const code = programs(programsOfHtml(page, '/docs'))
  const document = (await (await fetch(`${baseUrl}/api/v1/openapi.json`)).json()) as { paths: Record<string, object> }
  const operations = Object.values(document.paths).flatMap((item) => Object.keys(item)).length
  expect.soft(curl.length, '/docs curl examples, one per operation').toBe(operations)
  expect.soft(code.length, '/docs JavaScript and Python examples, three per operation').toBe(3 * operations)
  return { page, curl, code }
}

describe('the documentation', () => {
  it('every example of the README, docs/, /docs, the demo banner and the welcome page gives its documented status as pasted, in curl, JavaScript and Python', async () => {
    const interpreters: Interpreters = { node: 'node', python: await pythonWithRequests() }
    const port = await freePort()
    const server = await startServer({
      DATABASE_URL: `sqlite:${path.join(tempDir(), 'examples.db')}`,
      CATALOG_DIR,
      PORT: String(port),
      RATE_LIMIT: '10000',
      ORGANISATION_RATE_LIMIT: '10000',
    })
    try {
      const started = performance.now()
      const banner = server.output()
      const exported = bannerExports(banner)
      expect(Object.keys(exported), "the banner's export line sets the examples' variables").toEqual(VARIABLES)
      const partner = await partnerPages(server.baseUrl)
      const reference = await referenceExamples(server.baseUrl)
      const pageBaseUrl = /export BASE_URL=(\S+)/.exec(reference.page)?.[1] ?? ''
      const markdown = markdownExamples()
      expect.soft(markdown.filter((e) => e.kind === 'program').length, 'Markdown JS/Python').toBeGreaterThanOrEqual(3)
      expect.soft(markdown.filter((e) => /localhost:3000/.test(textOf(e))).map(textOf), 'hard-coded ports').toEqual([])
      const sources: Source[] = [
        { name: 'README.md and docs/', examples: markdown, variables: exported },
        { name: '/docs', examples: [...shell(reference.curl), ...reference.code], variables: exported },
        {
          name: '/docs with a sandbox key',
          examples: shell(reference.curl),
          variables: { BASE_URL: pageBaseUrl, API_KEY: partner.testKey, STUDENT_ID: partner.sandboxStudent },
        },
        { name: 'demo banner', examples: shell(curlCommandsOfText(banner, 'demo banner')), variables: {} },
        {
          name: 'dashboard',
          examples: [
            ...shell(examplesOfHtml(partner.welcome.body, 'welcome page')),
            ...programs(programsOfHtml(partner.welcome.body, 'welcome page').filter(usesEveryValue)),
            ...shell(examplesOfHtml(partner.overview.body, 'overview page')),
          ],
          variables: {},
        },
      ]
      const beyond = (example: Example) => BEYOND_THE_DEMO.find(({ text }) => textOf(example).includes(text))
      const tasks = sources.flatMap((source) =>
        source.examples
          .filter((example) => beyond(example) === undefined)
          .map((example) => async () => {
            if (example.kind === 'program') return runProgram(example.example, source.variables, interpreters)
            return runExample(example.example, source.variables, mkdtempSync(path.join(os.tmpdir(), 'example-')))
          }),
      )
      const setUp = performance.now() - started
      const runs = await pooled(tasks, AT_ONCE)
      let at = 0
      const bySource = sources.map((source) => {
        const count = source.examples.filter((example) => beyond(example) === undefined).length
        const skipped = source.examples.flatMap((example) => {
          const reason = beyond(example)
          return reason === undefined ? [] : [`${example.example.where}: ${reason.why}`]
        })
        at += count
        return { source, runs: runs.slice(at - count, at), skipped }
      })
      const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`
      const ran = seconds(performance.now() - started - setUp)
      const timing = `${tasks.length} run in ${ran}, ${AT_ONCE} at once, after ${seconds(setUp)} of pages`
      console.info(
        [...bySource.map(({ source, runs, skipped }) => summary(source.name, runs, skipped)), timing].join('\n'),
      )
      for (const { source, runs } of bySource) {
        expect.soft(runs.length, `${source.name} examples`).toBeGreaterThanOrEqual(2)
        expect.soft(failureReport(runs), `${source.name}: examples that do not run as pasted`).toBe('')
      }
    } finally {
      await server.stop()
    }
    // About 5 s of the examples' CPU: 3 to 6 s on an idle 2-core machine, 15 to 20 s when it is shared.
  }, 60_000)
})
