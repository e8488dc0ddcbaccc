/**
 * The server's compiled code is kept by Node's compile cache in a folder of the service's own
 * (src/compile-cache.ts). A cache holds code V8 runs, guarded only by CRC-32s anyone can
 * recompute, so the server never writes into the folder its code is loaded from and never reads
 * a cache from a folder someone else could have written.
 */
import fs from 'node:fs'
import path from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { whyUnsafe } from '../../src/compile-cache.js'
import { CATALOG_DIR, tempDir } from '../helper.js'
import { ROOT, type RunningServer, startServer } from './process.js'

/** Every file under `dir` with its size and modification time. */
function snapshot(dir: string): Record<string, string> {
  const files: Record<string, string> = {}
  for (const entry of fs.readdirSync(dir, { recursive: true, withFileTypes: true })) {
    const file = path.join(entry.parentPath, entry.name)
    const stat = fs.lstatSync(file)
    files[path.relative(dir, file)] = `${stat.size} ${stat.mtimeMs}`
  }
  return files
}

/** The folders Node read cached code from, by its own debug output. */
function readFrom(output: string): string[] {
  return [...output.matchAll(/\[compile cache\] reading cache from (\S+)/g)].map((match) => path.dirname(match[1]!))
}

/** The server's own log line once Node has written the compiled code to the cache. */
const SAVED = /"msg":"compile cache saved"/

/** A copy of the built entry and bundle (inside the checkout, so that the bundle finds node_modules). */
function codeFolder(): string {
  const dir = fs.mkdtempSync(path.join(ROOT, 'dist', 'compile-cache-test-'))
  for (const name of ['server.js', 'server-bundle.cjs'])
    fs.copyFileSync(path.join(ROOT, 'dist', name), path.join(dir, name))
  return dir
}

describe('the compile cache of the built server', () => {
  let server: RunningServer | undefined
  const folders: string[] = []
  afterEach(async () => {
    await server?.stop('SIGKILL')
    server = undefined
    for (const dir of folders.splice(0)) fs.rmSync(dir, { recursive: true, force: true })
  })

  /** Starts the built server from `code`; Node's debug lines go to a file (see startServer). */
  const start = async (code: string, cacheDir: string) => {
    const debug = path.join(tempDir(), 'stderr.log')
    server = await startServer(
      {
        DATABASE_URL: `sqlite:${path.join(tempDir(), 'compile-cache.db')}`,
        CATALOG_DIR,
        SEED_DEMO: 'false',
        COMPILE_CACHE_DIR: cacheDir,
        NODE_DEBUG_NATIVE: 'COMPILE_CACHE',
        LOG_LEVEL: 'debug',
      },
      20_000,
      path.join(code, 'server.js'),
      debug,
    )
    return { debug: () => fs.readFileSync(debug, 'utf8') }
  }
  /** Waits until the server has written the cache: then Node's debug lines for it are all in the file. */
  const saved = () => server!.waitForOutput((out) => SAVED.test(out), 15_000)
  const stop = async () => {
    expect(await server!.stop('SIGTERM')).toBe(0)
    server = undefined
  }

  it('writes nothing beside its code, and compiles from its own folder at the next start', async () => {
    const code = codeFolder()
    folders.push(code)
    const cache = path.join(tempDir(), 'compile-cache')
    const before = snapshot(code)

    const first = await start(code, cache)
    await saved()
    expect(first.debug()).toMatch(/writing cache for (?:CommonJS )?\S*server-bundle\.cjs/)
    await stop()
    expect(snapshot(code)).toEqual(before)
    expect(fs.statSync(cache).mode & 0o777).toBe(0o700)

    const second = await start(code, cache)
    await saved()
    expect(second.debug()).toMatch(/cache for (?:CommonJS )?\S*server-bundle\.cjs was accepted/)
    expect(new Set(readFrom(second.debug()))).toEqual(new Set([path.join(cache, fs.readdirSync(cache)[0]!)]))
    await stop()
    expect(snapshot(code)).toEqual(before)
  })

  it('reads no cache from a folder others can write, nor from one beside the code, and says why', async () => {
    const code = codeFolder()
    folders.push(code)
    // A cache that a first start wrote, then left where anyone could replace it.
    const cache = path.join(tempDir(), 'compile-cache')
    await start(code, cache)
    await saved()
    await stop()
    fs.chmodSync(cache, 0o777)
    const open = await start(code, cache)
    expect(server!.output()).toContain(`compile cache off: ${cache} is writable by other users`)
    expect(readFrom(open.debug())).toEqual([])
    await stop()

    const beside = path.join(code, 'cache')
    const inside = await start(code, beside)
    expect(server!.output()).toContain(`compile cache off: ${beside} is inside the folder the code is loaded from`)
    expect(readFrom(inside.debug())).toEqual([])
    expect(fs.existsSync(beside)).toBe(false)
  })
})

describe('whyUnsafe', () => {
  const me = { uid: process.getuid!() }

  it('accepts a folder of its own, made 0700 when absent', () => {
    const dir = path.join(tempDir(), 'a', 'b')
    expect(whyUnsafe(dir, path.join(ROOT, 'dist'), me)).toBeUndefined()
    expect(fs.statSync(dir).mode & 0o777).toBe(0o700)
  })

  it('refuses a folder inside the code, however it is named, another user’s, a writable one and a link', () => {
    const code = tempDir()
    const codeLink = path.join(tempDir(), 'code-link')
    fs.symlinkSync(code, codeLink)
    expect(whyUnsafe(code, code, me)).toMatch(/inside the folder the code is loaded from/)
    expect(whyUnsafe(path.join(code, 'x', '..', 'cache'), code, me)).toMatch(/inside the folder/)
    expect(whyUnsafe(path.join(codeLink, 'cache'), code, me)).toMatch(/inside the folder/)
    expect(fs.existsSync(path.join(code, 'cache'))).toBe(false)

    const mine = tempDir()
    expect(whyUnsafe(mine, code, { uid: me.uid + 1 })).toMatch(/belongs to another user/)
    fs.chmodSync(mine, 0o720)
    expect(whyUnsafe(mine, code, me)).toMatch(/writable by other users/)
    fs.chmodSync(mine, 0o700)
    const link = path.join(tempDir(), 'link')
    fs.symlinkSync(mine, link)
    expect(whyUnsafe(link, code, me)).toMatch(/symbolic link/)
    const file = path.join(tempDir(), 'file')
    fs.writeFileSync(file, '')
    expect(whyUnsafe(file, code, me)).toMatch(/not a directory/)
  })
})
