/**
 * The open-loop load generator in C (bench/open-loop-client.c), compiled once per version of its
 * source into bench/.data/ with the machine's C compiler. Where there is none, or it fails, the
 * open-loop rows fall back to Node on raw sockets (latency-client.mjs --rate), and the run's
 * notes say which generator measured them.
 */
import { spawnSync } from 'node:child_process'
import crypto from 'node:crypto'
import fs from 'node:fs'
import path from 'node:path'
import { BENCH_DIR, DATA_DIR } from './paths.mjs'

const SOURCE = path.join(BENCH_DIR, 'open-loop-client.c')

let built

/** `{ binary }` ready to run, or `{ reason }` why the C generator is not available. */
export function openLoopClient() {
  built ??= build()
  return built
}

function build() {
  if (process.env.BENCH_OPEN_LOOP_CLIENT === 'node') return { reason: 'BENCH_OPEN_LOOP_CLIENT=node' }
  const source = fs.readFileSync(SOURCE)
  const version = crypto.createHash('sha256').update(source).digest('hex').slice(0, 12)
  const binary = path.join(DATA_DIR, `open-loop-client-${version}`)
  if (fs.existsSync(binary)) return { binary }
  fs.mkdirSync(DATA_DIR, { recursive: true })
  const compiler = process.env.CC ?? 'cc'
  const result = spawnSync(compiler, ['-O2', '-o', `${binary}.tmp`, SOURCE], { encoding: 'utf8' })
  if (result.error !== undefined || result.status !== 0) {
    const why = result.error?.message ?? result.stderr.trim().split('\n')[0]
    return { reason: `${compiler} could not build bench/open-loop-client.c (${why})` }
  }
  fs.renameSync(`${binary}.tmp`, binary)
  return { binary }
}
