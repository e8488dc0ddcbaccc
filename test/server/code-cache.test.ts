/**
 * The server's code compiled from V8's code cache (src/code-cache.ts): a cache is used only for
 * the source it was made from, anything that does not fit is compiled afresh and replaced, and
 * the built server writes one at its first start and compiles from it at the next, with the V8
 * flags it sets itself.
 */
import { spawnSync } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import { crc32 } from 'node:zlib'
import { afterEach, describe, expect, it } from 'vitest'
import { CATALOG_DIR, tempDir } from '../helper.js'
import { ROOT, type RunningServer, startServer } from './process.js'

/** A module whose functions are compiled when called, as the bundle's are. */
const moduleSource = (answer: number) =>
  `'use strict'\nfunction answer() { return ${answer} }\nmodule.exports = { answer, file: __filename, dir: __dirname }\n`

function writeModule(dir: string, answer: number): string {
  const file = path.join(dir, 'module.cjs')
  fs.writeFileSync(file, moduleSource(answer))
  return file
}

interface Load {
  cache: string
  answer: number
  file: string
  dir: string
  saved: boolean
}

/**
 * Loads the module in a process of its own, as a server start does (within one process V8
 * compiles a source it has seen from its own memory, whatever the file says), then saves.
 */
function load(file: string, cacheFile?: string): Load {
  const script = `
    import { loadCachedModule } from ${JSON.stringify(path.join(ROOT, 'dist', 'code-cache.js'))}
    const loaded = loadCachedModule(${JSON.stringify(file)}${cacheFile === undefined ? '' : `, ${JSON.stringify(cacheFile)}`})
    const { answer, file, dir } = loaded.exports
    console.log(JSON.stringify({ cache: loaded.cache, answer: answer(), file, dir, saved: loaded.save() }))`
  const run = spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' })
  if (run.status !== 0) throw new Error(run.stderr)
  return JSON.parse(run.stdout) as Load
}

describe('loadCachedModule', () => {
  it('writes a cache on the first load and compiles from it on the next', () => {
    const file = writeModule(tempDir(), 41)
    expect(load(file)).toEqual({ cache: 'absent', answer: 41, file, dir: path.dirname(file), saved: true })
    const written = fs.readFileSync(`${file}.cache`)
    expect(written.length).toBeGreaterThan(12)
    // Used as it was: nothing written again.
    expect(load(file)).toMatchObject({ cache: 'used', answer: 41, saved: false })
    expect(fs.readFileSync(`${file}.cache`)).toEqual(written)
  })

  it("never runs another source's code: a bundle of the same length rebuilt is compiled afresh", () => {
    const file = writeModule(tempDir(), 41)
    load(file)
    // Same length, so V8's own check (which looks only at the length) would take the old cache.
    fs.writeFileSync(file, moduleSource(42))
    expect(load(file)).toMatchObject({ cache: 'stale', answer: 42, saved: true })
    expect(load(file)).toMatchObject({ cache: 'used', answer: 42 })
  })

  it('compiles afresh from a damaged cache, one V8 refuses, or a file cut short, and replaces it', () => {
    const file = writeModule(tempDir(), 7)
    load(file)
    const cache = `${file}.cache`
    const stored = fs.readFileSync(cache)
    // One byte of the code changed: V8's release build would take it.
    const damaged = Buffer.from(stored)
    damaged[damaged.length - 5]! ^= 0xff
    fs.writeFileSync(cache, damaged)
    expect(load(file)).toMatchObject({ cache: 'stale', answer: 7, saved: true })
    expect(load(file)).toMatchObject({ cache: 'used', answer: 7 })

    // Headers that fit, over data that is not V8's.
    const foreign = Buffer.alloc(stored.length - 12, 0x5a)
    const header = Buffer.from(stored.subarray(0, 12))
    header.writeUInt32LE(crc32(foreign), 8)
    fs.writeFileSync(cache, Buffer.concat([header, foreign]))
    expect(load(file)).toMatchObject({ cache: 'rejected', answer: 7, saved: true })
    expect(load(file)).toMatchObject({ cache: 'used', answer: 7 })

    fs.writeFileSync(cache, stored.subarray(0, 5))
    expect(load(file)).toMatchObject({ cache: 'stale', answer: 7 })
  })

  it('does not throw when the cache cannot be written, and leaves nothing behind', () => {
    const dir = tempDir()
    const file = writeModule(dir, 1)
    expect(load(file, path.join(dir, 'missing', 'module.cjs.cache'))).toMatchObject({ cache: 'absent', saved: false })
    expect(fs.readdirSync(dir)).toEqual(['module.cjs'])
  })
})

describe('the built server', () => {
  let server: RunningServer | undefined
  afterEach(async () => {
    await server?.stop('SIGKILL')
    server = undefined
  })

  it('compiles from the code cache the build wrote (test/global-setup.ts builds as npm run build does)', async () => {
    server = await startServer({
      DATABASE_URL: `sqlite:${path.join(tempDir(), 'built.db')}`,
      CATALOG_DIR,
      SEED_DEMO: 'false',
      LOG_LEVEL: 'debug',
    })
    expect(server.output()).toContain('"codeCache":"used"')
    expect(server.output()).not.toContain('code cache saved')
  })

  it('writes its code cache at the first start and compiles from it at the next, with the V8 flags it sets', async () => {
    // A copy of the entry and the bundle of its own (inside the checkout, so that the bundle
    // finds node_modules): the tests running beside this one start dist/server.js.
    const dir = fs.mkdtempSync(path.join(ROOT, 'dist', 'code-cache-test-'))
    try {
      for (const name of ['server.js', 'server-bundle.cjs']) {
        fs.copyFileSync(path.join(ROOT, 'dist', name), path.join(dir, name))
      }
      const database = `sqlite:${path.join(tempDir(), 'code-cache.db')}`
      const start = async (env: Record<string, string> = {}) => {
        server = await startServer(
          { DATABASE_URL: database, CATALOG_DIR, SEED_DEMO: 'false', LOG_LEVEL: 'debug', ...env },
          20_000,
          path.join(dir, 'server.js'),
        )
        const compiled = /"codeCache":"(\w+)"/.exec(server.output())?.[1]
        // Saved, or not, right after the server listens.
        const saved =
          compiled === 'used'
            ? undefined
            : /"written":(\w+)/.exec(await server.waitForOutput((output) => output.includes('"written"'), 20_000))?.[1]
        expect((await fetch(`${server.baseUrl}/readyz`)).status).toBe(200)
        expect(await server.stop('SIGTERM')).toBe(0)
        server = undefined
        return { compiled, saved }
      }

      expect(await start()).toEqual({ compiled: 'absent', saved: 'true' })
      expect(await start()).toEqual({ compiled: 'used', saved: undefined })
      // Another heap growth is another V8 flag: the cache made with the default does not fit,
      // and the one written then fits the next start with the same setting.
      expect(await start({ HEAP_GROWING_PERCENT: '50' })).toEqual({ compiled: 'rejected', saved: 'true' })
      expect(await start({ HEAP_GROWING_PERCENT: '50' })).toEqual({ compiled: 'used', saved: undefined })
    } finally {
      fs.rmSync(dir, { recursive: true, force: true })
    }
  })
})

describe('the build step that writes the code cache (dist/warm-code-cache.js)', () => {
  it('lets the build go on, with a note, when the server cannot start', () => {
    // Its modules beside a bundle that fails as it loads (inside dist/, whose package.json makes them ES modules).
    const dir = fs.mkdtempSync(path.join(ROOT, 'dist', 'warm-code-cache-test-'))
    try {
      for (const name of ['warm-code-cache.js', 'compiled-server.js', 'code-cache.js', 'config.js', 'heap-growth.js']) {
        fs.copyFileSync(path.join(ROOT, 'dist', name), path.join(dir, name))
      }
      fs.writeFileSync(path.join(dir, 'server-bundle.cjs'), "throw new Error('this bundle is broken')\n")
      const run = spawnSync(process.execPath, [path.join(dir, 'warm-code-cache.js')], { encoding: 'utf8' })
      expect(run.status).toBe(0)
      expect(run.stderr).toContain('this bundle is broken')
      expect(run.stderr).toMatch(
        /warm-code-cache: no code cache written \(exit 1\); the server compiles its code at start/,
      )
      expect(fs.existsSync(path.join(dir, 'server-bundle.cjs.cache'))).toBe(false)
    } finally {
      fs.rmSync(dir, { recursive: true, force: true })
    }
  })
})
