/**
 * A private copy of a generated dataset for one script: servers write to their database (WAL,
 * key usage, disclosure records), and a copy keeps the generated dataset as it was and lets
 * each measurement start from the same file.
 */
import fs from 'node:fs'
import path from 'node:path'
import { DATA_DIR } from './paths.mjs'

const SCRATCH_DIR = path.join(DATA_DIR, 'scratch')

/** Copies `database` to bench/.data/scratch/<name>.db (no WAL or shared-memory file beside it). */
export function scratchCopy(database, name) {
  fs.mkdirSync(SCRATCH_DIR, { recursive: true })
  const copy = path.join(SCRATCH_DIR, `${name}.db`)
  removeScratch(copy)
  fs.copyFileSync(database, copy)
  return copy
}

export function removeScratch(copy) {
  for (const suffix of ['', '-wal', '-shm']) fs.rmSync(`${copy}${suffix}`, { force: true })
}

/** The server script of a build: bench/.data/dist (this run's copy of dist/) unless `dir` names another. */
export function serverScript(dir) {
  return path.join(dir ?? path.join(DATA_DIR, 'dist'), 'server.js')
}

export function median(values) {
  const sorted = [...values].sort((a, b) => a - b)
  const middle = Math.floor(sorted.length / 2)
  return sorted.length % 2 === 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2
}
