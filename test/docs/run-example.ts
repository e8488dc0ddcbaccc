/**
 * Runs a shell example through sh, as a reader's terminal would, and reports the HTTP status
 * of its last curl command. Only that command is changed: `-s -o /dev/null -w` is added to it so
 * that the status is printed on a line of its own.
 *
 * The environment holds only PATH, an empty HOME (no reader's ~/.curlrc, no proxy settings) and
 * the variables the documentation tells the reader to set. `set -u` makes a variable the reader
 * was never told to set an error that names it, instead of an empty string in a URL.
 */
import { execFile } from 'node:child_process'
import { existsSync, readFileSync, rmSync } from 'node:fs'
import path from 'node:path'
import type { ShellExample } from './shell-examples.js'

export interface ExampleRun {
  example: { where: string }
  /** The last curl's status, or undefined if it never printed one. */
  status: number | undefined
  /** Why the example cannot give its documented status; undefined when it does. */
  failure: string | undefined
}

const STATUS_LINE = /^status (\d{3})$/m

/** The example with the status write-out added to its last command, or the reason it cannot be. */
function withStatusWriteOut(script: string, bodyFile: string): { script: string } | { problem: string } {
  const lines = script.split('\n')
  // The last command starts after the last line that does not continue onto the next one.
  let start = lines.length - 1
  while (start > 0 && /\\$/.test(lines[start - 1]!)) start--
  const last = lines.slice(start).join('\n')
  if (!/^curl\s/.test(last.trim()) || /[|;&>]\s|\$\(/.test(last.replace(/'[^']*'|"[^"]*"/g, ''))) {
    return { problem: `its last command is not a single curl call, so its status cannot be read: ${last}` }
  }
  return {
    script: [...lines.slice(0, start), `${last} -s -o '${bodyFile}' --max-time 10 -w '\\nstatus %{http_code}\\n'`].join(
      '\n',
    ),
  }
}

function sh(
  script: string,
  env: Record<string, string>,
  cwd: string,
): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      'sh',
      ['-c', `set -u\n${script}`],
      { env, cwd, timeout: 20_000, encoding: 'utf8' },
      (error, stdout, stderr) => {
        const code = error === null ? 0 : typeof error.code === 'number' ? error.code : 1
        resolve({ code, stdout, stderr })
      },
    )
  })
}

export function matches(expected: number | '2xx', status: number): boolean {
  return expected === '2xx' ? status >= 200 && status < 300 : status === expected
}

/** Runs one example; `home` is an empty directory of its own, used as HOME and as the working directory. */
export async function runExample(
  example: ShellExample,
  variables: Record<string, string>,
  home: string,
): Promise<ExampleRun> {
  if (example.placeholders.length > 0) {
    return {
      example,
      status: undefined,
      failure: `not runnable as pasted: replace ${example.placeholders.join(', ')} first`,
    }
  }
  const bodyFile = path.join(home, 'body')
  rmSync(bodyFile, { force: true })
  const prepared = withStatusWriteOut(example.script, bodyFile)
  if ('problem' in prepared) return { example, status: undefined, failure: prepared.problem }
  const result = await sh(
    prepared.script,
    { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: home, ...variables },
    home,
  )
  const status = STATUS_LINE.exec(result.stdout)?.[1]
  if (status === undefined) {
    return {
      example,
      status: undefined,
      failure: `printed no status (exit ${result.code}): ${result.stderr.trim() || result.stdout.trim()}`,
    }
  }
  if (!matches(example.expected, Number(status))) {
    const body = ((existsSync(bodyFile) ? readFileSync(bodyFile, 'utf8') : '') + result.stderr).trim().slice(0, 300)
    return {
      example,
      status: Number(status),
      failure: `gave ${status}, documented ${example.expected}${body === '' ? '' : `: ${body}`}`,
    }
  }
  return { example, status: Number(status), failure: undefined }
}

/** A readable list of the examples that failed, one per line, or '' when none did. */
export function failureReport(runs: ExampleRun[]): string {
  return runs
    .filter((run) => run.failure !== undefined)
    .map((run) => `${run.example.where}\n    ${run.failure}`)
    .join('\n')
}
