/**
 * A one-line progress report on stderr for long imports. It only draws on a terminal: when
 * stderr is a pipe or a file (a script, a CI log) the `\r` rewrites would be noise, so it
 * stays silent there.
 */
const REDRAW_MS = 100

export class ProgressLine {
  readonly #stream: NodeJS.WriteStream
  readonly #enabled: boolean
  #lastDraw = 0
  #visible = false

  constructor(stream: NodeJS.WriteStream = process.stderr) {
    this.#stream = stream
    this.#enabled = stream.isTTY === true
  }

  /** Redraws the line, at most every 100 ms unless `force` is set. */
  update(text: string, force = false): void {
    if (!this.#enabled) return
    const now = Date.now()
    if (!force && now - this.#lastDraw < REDRAW_MS) return
    this.#lastDraw = now
    this.#visible = true
    this.#stream.write(`\r${text}\x1b[K`)
  }

  /** Removes the line, so that what follows starts on a clean line. */
  clear(): void {
    if (!this.#visible) return
    this.#stream.write('\r\x1b[K')
    this.#visible = false
  }
}

export function count(value: number): string {
  return value.toLocaleString('en-US')
}
