/**
 * Finds the JavaScript and Python examples a reader would save and run (the Markdown pages'
 * ```js and ```python blocks, /docs's `<pre data-example>` blocks), and runs each as a file with
 * `node` or `python3`, in an empty folder, with only PATH, HOME and the variables the reader was
 * told to set. An example calls the API when it reads `BASE_URL`; other code (a certificate's
 * canonical form, say) is not one to run. Each prints the status first (`200 {...}`): the one
 * expected is a 2xx unless a comment shows another (`// HTTP/1.1 404 Not Found ...`).
 */
import { execFile } from 'node:child_process'
import { mkdtempSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { type ExampleRun, matches } from './run-example.js'
import { htmlText } from './shell-examples.js'

export type ProgramLanguage = 'javascript' | 'python'

export interface ProgramExample {
  /** Where a reader finds it, e.g. `docs/api.md:40` or `/docs getLesson python-urllib`. */
  where: string
  language: ProgramLanguage
  source: string
  expected: number | '2xx'
}

/** The interpreters the examples run with: the `node` on PATH, a python3 that can import requests. */
export interface Interpreters {
  node: string
  python: string
}

const FENCES: Record<string, ProgramLanguage> = {
  js: 'javascript',
  javascript: 'javascript',
  mjs: 'javascript',
  python: 'python',
  py: 'python',
}

/** Which language each of /docs's example kinds is written in (curl is run as a shell example). */
const REFERENCE_KINDS: Record<string, ProgramLanguage> = {
  javascript: 'javascript',
  python: 'python',
  'python-urllib': 'python',
}

const CALLS_API = /\bBASE_URL\b/
const SHOWN_STATUS = /^\s*(?:#|\/\/)\s*HTTP\/[\d.]+ (\d{3})\b/m

function program(where: string, language: ProgramLanguage, source: string): ProgramExample {
  const shown = SHOWN_STATUS.exec(source)?.[1]
  return { where, language, source, expected: shown === undefined ? '2xx' : Number(shown) }
}

/** The API examples in a Markdown file's ```js and ```python blocks. */
export function programsOfMarkdown(markdown: string, file: string): ProgramExample[] {
  const lines = markdown.split('\n')
  const found: ProgramExample[] = []
  for (let i = 0; i < lines.length; i++) {
    const fence = /^\s*```\s*(\w*)/.exec(lines[i]!)
    if (fence === null) continue
    const start = i + 1
    let end = start
    while (end < lines.length && !/^\s*```\s*$/.test(lines[end]!)) end++
    const language = FENCES[fence[1]!]
    const source = lines.slice(start, end).join('\n')
    if (language !== undefined && CALLS_API.test(source)) found.push(program(`${file}:${start + 1}`, language, source))
    i = end
  }
  return found
}

/** The JavaScript and Python examples of a page made by the reference (each named by its operation). */
export function programsOfHtml(html: string, page: string): ProgramExample[] {
  const found: ProgramExample[] = []
  for (const match of html.matchAll(/<pre data-example="([\w-]+)"[^>]*>([\s\S]*?)<\/pre>/g)) {
    const language = REFERENCE_KINDS[match[1]!]
    if (language === undefined) continue
    const before = html.slice(0, match.index)
    const section = before.slice(before.lastIndexOf('<section class="operation" id="'))
    const operation = /^<section class="operation" id="([^"]+)"/.exec(section)?.[1] ?? '?'
    found.push(program(`${page} ${operation} ${match[1]}`, language, htmlText(match[2]!)))
  }
  return found
}

function run(
  command: string,
  args: string[],
  options: { env: Record<string, string>; cwd?: string },
): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(command, args, { ...options, timeout: 20_000, encoding: 'utf8' }, (error, stdout, stderr) => {
      const code = error === null ? 0 : typeof error.code === 'number' ? error.code : 1
      resolve({ code, stdout, stderr: error !== null && stderr === '' ? error.message : stderr })
    })
  })
}

/**
 * The first of Debian's /usr/bin/python3 (what .ci/run installs python3-requests for) and the
 * python3 on PATH that can import requests, as its real executable (a pyenv shim needs a HOME the
 * examples do not have). Throws, saying what to install, when none can.
 */
export async function pythonWithRequests(): Promise<string> {
  const tried: string[] = []
  for (const candidate of ['/usr/bin/python3', 'python3']) {
    const env = { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: process.env.HOME ?? os.homedir() }
    const probe = await run(candidate, ['-c', 'import sys, requests; print(sys.executable)'], { env })
    if (probe.code === 0) return probe.stdout.trim()
    tried.push(`${candidate}: ${probe.stderr.trim().split('\n').pop()}`)
  }
  throw new Error(
    `no python3 here can import requests, which the documentation's Python examples use; install Debian's ` +
      `python3-requests (apt-get install python3-requests; .ci/run does).\n${tried.join('\n')}`,
  )
}

/** Runs one example as a file in an empty folder of its own; the status is the first word it prints. */
export async function runProgram(
  example: ProgramExample,
  variables: Record<string, string>,
  interpreters: Interpreters,
): Promise<ExampleRun> {
  const folder = mkdtempSync(path.join(os.tmpdir(), 'example-'))
  const file = path.join(folder, example.language === 'javascript' ? 'example.mjs' : 'example.py')
  writeFileSync(file, example.source)
  const interpreter = example.language === 'javascript' ? interpreters.node : interpreters.python
  const env = { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: folder, ...variables }
  const result = await run(interpreter, [file], { env, cwd: folder })
  const printed = /^(\d{3})\b/.exec(result.stdout)?.[1]
  const output = `${result.stdout}${result.stderr}`.trim().slice(0, 400)
  if (result.code !== 0) return { example, status: undefined, failure: `exit ${result.code}: ${output}` }
  if (printed === undefined) return { example, status: undefined, failure: `printed no status first: ${output}` }
  const status = Number(printed)
  if (!matches(example.expected, status)) {
    return { example, status, failure: `gave ${status}, documented ${example.expected}: ${output}` }
  }
  return { example, status, failure: undefined }
}
