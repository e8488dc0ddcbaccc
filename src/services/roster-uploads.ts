/**
 * Roster exports uploaded in the dashboard, between their preview and their import: each is a
 * file of its own in a private folder (0700, files 0600), named by a random token that only the
 * operator who uploaded it is given. The file is removed once imported or cancelled, and a sweep
 * removes any left behind (a preview never answered, a server stopped meanwhile): an export holds
 * every personal field of a district's children, so it must not outlive its use.
 *
 * Beside it, a small JSON file keeps the upload's state (who uploaded it, the preview's counts,
 * then the outcome), so that any process sharing the folder (node:cluster workers) can show the
 * preview and take the confirmation, and a confirmation is taken once (a rename claims it).
 */
import { randomBytes } from 'node:crypto'
import fs from 'node:fs'
import path from 'node:path'
import { pipeline } from 'node:stream/promises'
import type { Readable } from 'node:stream'

const TOKEN = /^[A-Za-z0-9_-]{43}$/

/** `pending`: previewed, awaiting confirmation; `claimed`: being imported or cancelled; `done`: imported. */
export type UploadStage = 'pending' | 'claimed' | 'done'

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

  #stateFile(token: string, stage: UploadStage): string | undefined {
    return TOKEN.test(token) ? path.join(this.#dir, `${token}.${stage}.json`) : undefined
  }

  /** Writes the upload's state at `stage` (0600; replaced whole, never seen half-written). */
  writeState(token: string, stage: UploadStage, state: object): void {
    const file = this.#stateFile(token, stage)!
    const draft = `${file}.${randomBytes(6).toString('hex')}`
    fs.writeFileSync(draft, JSON.stringify(state), { flag: 'wx', mode: 0o600 })
    fs.renameSync(draft, file)
  }

  /** The upload's state at `stage`, or undefined. */
  readState<T>(token: string, stage: UploadStage): T | undefined {
    const file = this.#stateFile(token, stage)
    if (file === undefined) return undefined
    try {
      return JSON.parse(fs.readFileSync(file, 'utf8')) as T
    } catch {
      return undefined
    }
  }

  /** Takes a pending upload for its import or cancel; undefined when another request took it first. */
  claim<T>(token: string): T | undefined {
    const from = this.#stateFile(token, 'pending')
    if (from === undefined) return undefined
    const to = this.#stateFile(token, 'claimed')!
    try {
      fs.renameSync(from, to)
    } catch {
      return undefined
    }
    return this.readState<T>(token, 'claimed')
  }

  /** Removes the export and its pending or claimed state; a `done` state stays until swept. */
  remove(token: string): void {
    for (const file of [this.fileOf(token), this.#stateFile(token, 'pending'), this.#stateFile(token, 'claimed')])
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
