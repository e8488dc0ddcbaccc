/**
 * Roster exports uploaded in the dashboard, between their preview and their import: each is a
 * file of its own in a private folder (0700, files 0600), named by a random token that only the
 * operator who uploaded it is given. The file is removed once imported or cancelled, and a sweep
 * removes any left behind (a preview never answered, a server stopped meanwhile): an export holds
 * every personal field of a district's children, so it must not outlive its use.
 */
import { randomBytes } from 'node:crypto'
import fs from 'node:fs'
import path from 'node:path'
import { pipeline } from 'node:stream/promises'
import type { Readable } from 'node:stream'

const TOKEN = /^[A-Za-z0-9_-]{43}$/

export type SavedUpload = { ok: true; token: string; bytes: number } | { ok: false; reason: 'too-large' }

export class RosterUploads {
  readonly #dir: string
  readonly maxBytes: number

  constructor(dir: string, maxBytes: number) {
    this.#dir = dir
    this.maxBytes = maxBytes
  }

  /** The file of a token, or undefined for anything that is not one of ours. */
  fileOf(token: string): string | undefined {
    return TOKEN.test(token) ? path.join(this.#dir, `${token}.zip`) : undefined
  }

  /**
   * Writes `stream` to a new private file; `truncated` says, once the stream ended, whether it was
   * cut at the size limit (the file is then removed).
   */
  async save(stream: Readable, truncated: () => boolean): Promise<SavedUpload> {
    fs.mkdirSync(this.#dir, { recursive: true, mode: 0o700 })
    // A folder made before, or by hand, is made private too: it holds children's records.
    if ((fs.statSync(this.#dir).mode & 0o077) !== 0) fs.chmodSync(this.#dir, 0o700)
    const token = randomBytes(32).toString('base64url')
    const file = this.fileOf(token)!
    // wx: never follows or reuses a file that is there already.
    try {
      await pipeline(stream, fs.createWriteStream(file, { flags: 'wx', mode: 0o600 }))
    } catch (error) {
      this.remove(token)
      throw error
    }
    if (truncated()) {
      this.remove(token)
      return { ok: false, reason: 'too-large' }
    }
    return { ok: true, token, bytes: fs.statSync(file).size }
  }

  remove(token: string): void {
    const file = this.fileOf(token)
    if (file !== undefined) fs.rmSync(file, { force: true })
  }

  /** Removes uploads older than `maxAgeMs`; returns how many. */
  sweep(now: number, maxAgeMs: number): number {
    let removed = 0
    let names: string[]
    try {
      names = fs.readdirSync(this.#dir)
    } catch {
      return 0
    }
    for (const name of names) {
      const file = path.join(this.#dir, name)
      try {
        if (now - fs.statSync(file).mtimeMs > maxAgeMs) {
          fs.rmSync(file, { force: true })
          removed++
        }
      } catch {
        // Removed meanwhile by the request that owned it.
      }
    }
    return removed
  }
}
