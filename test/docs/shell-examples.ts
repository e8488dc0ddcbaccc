/**
 * Finds the shell examples a reader would paste: in the README's fenced blocks, in the `<pre>`
 * blocks of an HTML page, and in plain printed text. Only examples that call curl count.
 *
 * An example is the commands that follow one another with no blank or comment line between
 * them (the README's ETag example is two commands: one keeps the ETag, one sends it back). The
 * status it should give is the one its output comment shows (`# HTTP/1.1 304 Not Modified`),
 * otherwise any 2xx.
 */

export interface ShellExample {
  /** Where a reader finds it, e.g. `README.md:37` or `/docs: curl "http://…/api/v1/tiers"`. */
  where: string
  /** The text exactly as a reader would paste it. */
  script: string
  /** A status the example shows, or '2xx'. */
  expected: number | '2xx'
  /** Text a reader would have to replace first (`<student-id>`): not runnable as pasted. */
  placeholders: string[]
}

const PLACEHOLDER = /<[A-Za-z][^<>\n]*>/g
const SHOWN_STATUS = /^#\s*HTTP\/[\d.]+ (\d{3})\b/
const CALLS_CURL = /(^|[\s$(|;&])curl\s/m

function example(where: string, script: string, comments: string[] = []): ShellExample {
  const shown = comments.map((line) => SHOWN_STATUS.exec(line.trim())?.[1]).find((status) => status !== undefined)
  return {
    where,
    script,
    expected: shown === undefined ? '2xx' : Number(shown),
    placeholders: script.match(PLACEHOLDER) ?? [],
  }
}

/** The lines of a shell text as commands: a line ending in `\` goes on with the next. */
interface LogicalLine {
  text: string
  /** 0-based index of its first physical line. */
  line: number
}

function logicalLines(lines: string[]): LogicalLine[] {
  const out: LogicalLine[] = []
  for (let i = 0; i < lines.length; i++) {
    const start = i
    const parts = [lines[i]!]
    while (/\\$/.test(lines[i]!) && i + 1 < lines.length) parts.push(lines[++i]!)
    out.push({ text: parts.join('\n'), line: start })
  }
  return out
}

/** The examples of one shell block; `where(line)` names a line of the block for the report. */
export function examplesOfShellBlock(block: string, where: (line: number) => string): ShellExample[] {
  const found: ShellExample[] = []
  let commands: LogicalLine[] = []
  let after: string[] = []
  const finish = () => {
    const script = commands.map((c) => c.text).join('\n')
    if (commands.length > 0 && CALLS_CURL.test(script)) found.push(example(where(commands[0]!.line), script, after))
    commands = []
    after = []
  }
  for (const line of logicalLines(block.split('\n'))) {
    const text = line.text.trim()
    if (text === '') finish()
    else if (text.startsWith('#')) {
      if (commands.length > 0) after.push(text)
    } else {
      if (after.length > 0) finish()
      commands.push(line)
    }
  }
  finish()
  return found
}

/** The examples in a Markdown file's fenced shell blocks (```sh, ```bash, ```shell or unlabelled). */
export function examplesOfMarkdown(markdown: string, file: string): ShellExample[] {
  const lines = markdown.split('\n')
  const found: ShellExample[] = []
  for (let i = 0; i < lines.length; i++) {
    const fence = /^\s*```\s*(\w*)/.exec(lines[i]!)
    if (fence === null) continue
    const start = i + 1
    let end = start
    while (end < lines.length && !/^\s*```\s*$/.test(lines[end]!)) end++
    if (['', 'sh', 'bash', 'shell'].includes(fence[1]!)) {
      found.push(...examplesOfShellBlock(lines.slice(start, end).join('\n'), (line) => `${file}:${start + line + 1}`))
    }
    i = end
  }
  return found
}

/** HTML text back to what a reader copies: tags dropped, character references decoded. */
export function htmlText(html: string): string {
  const named: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'", nbsp: '\u00a0' }
  return html.replace(/<[^>]*>/g, '').replace(/&(#x[0-9a-f]+|#[0-9]+|[a-z]+);/gi, (whole, name: string) => {
    if (name.startsWith('#x') || name.startsWith('#X')) return String.fromCodePoint(Number.parseInt(name.slice(2), 16))
    if (name.startsWith('#')) return String.fromCodePoint(Number(name.slice(1)))
    return named[name.toLowerCase()] ?? whole
  })
}

/** The examples in an HTML page's `<pre>` blocks. */
export function examplesOfHtml(html: string, page: string): ShellExample[] {
  const found: ShellExample[] = []
  for (const [, inner] of html.matchAll(/<pre\b[^>]*>([\s\S]*?)<\/pre>/g)) {
    const text = htmlText(inner!)
    found.push(...examplesOfShellBlock(text, () => `${page}: ${text.split('\n')[0]!.trim()}`))
  }
  return found
}

/** The curl commands in printed text (the demo banner): each one on its own, with its continuation lines. */
export function curlCommandsOfText(text: string, source: string): ShellExample[] {
  return logicalLines(text.split('\n'))
    .filter((line) => /^\s*curl\s/.test(line.text))
    .map((line) => example(`${source}: ${line.text.split('\n')[0]!.trim()}`, line.text.replace(/^\s+/gm, '')))
}
