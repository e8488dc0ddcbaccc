/**
 * Runs the built CLI on a real pseudo-terminal, as an operator at a shell does: util-linux
 * `script` gives the command a terminal for stdin and stdout, the test waits for the question,
 * types the answer, and gets the command's exit status back (`script -e`).
 */
import { spawn } from 'node:child_process'
import { CLI, type CliOptions, type CliResult, environment, ROOT } from './cli-harness.js'

/** How long the command may take to ask: it reads the database first, on a loaded machine. */
const ASK_WITHIN_MS = 30_000

const quoted = (word: string) => `'${word.replaceAll("'", `'\\''`)}'`

/** Runs `args` on a terminal and resolves when it has exited; with `answer`, types it once `question` shows. */
export async function answerOnTerminal(
  args: readonly string[],
  options: CliOptions,
  question?: string,
  answer?: string,
): Promise<CliResult> {
  const line = [process.execPath, CLI, ...args].map(quoted).join(' ')
  const child = spawn('script', ['-qfec', line, '/dev/null'], { cwd: options.cwd ?? ROOT, env: environment(options) })
  let output = ''
  let stderr = ''
  let asked: (() => void) | undefined
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
    output += chunk
    if (asked !== undefined && output.includes(question!)) asked()
  })
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk))
  const exited = new Promise<CliResult>((resolve) =>
    // A terminal ends lines with \r\n; the tests match lines as the other runs print them.
    child.once('close', (code) => resolve({ status: code ?? -1, stdout: output.replaceAll('\r\n', '\n'), stderr })),
  )
  try {
    if (question === undefined || answer === undefined) return await exited
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`no "${question}" within ${ASK_WITHIN_MS} ms:\n${output}`)),
        ASK_WITHIN_MS,
      )
      asked = () => {
        clearTimeout(timer)
        resolve()
      }
      if (output.includes(question)) asked()
      void exited.then(() => {
        clearTimeout(timer)
        reject(new Error(`exited without asking "${question}":\n${output}${stderr}`))
      })
    })
    // A terminal's Enter is a carriage return.
    child.stdin.write(`${answer}\r`)
    return await exited
  } finally {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL')
  }
}
