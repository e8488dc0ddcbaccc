/**
 * The server's compiled code is kept by Node's compile cache (src/compile-cache.ts). A cache holds
 * code V8 runs, guarded only by CRC-32s anyone can recompute, so the server never writes into the
 * folder its code is loaded from, and reads a cache only from a folder of its own that no one else
 * can write, or from one filled at install that it can read but neither write nor replace
 * (src/compile-cache-folder.ts, scripts/fill-compile-cache.mjs).
 */
import { execFileSync, spawn } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { judgeCacheFolder } from '../../src/compile-cache-folder.js'
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

/** The user `nobody`, where this test runs as root and can start the server as someone else. */
function nobody(): { uid: number; gid: number } | undefined {
  if (process.getuid?.() !== 0) return undefined
  try {
    const id = (flag: string) => Number(execFileSync('id', [flag, 'nobody'], { encoding: 'utf8' }).trim())
    return { uid: id('-u'), gid: id('-g') }
  } catch {
    return undefined
  }
}
const NOBODY = nobody()
const READ_ONLY_TITLE =
  NOBODY === undefined
    ? 'a compile cache filled at install (skipped: run as root, with a user nobody, to start the server as another user)'
    : 'a compile cache filled at install'

/**
 * Runs scripts/fill-compile-cache.mjs for nobody in a process group of its own, so that it and the
 * servers it starts are all stopped however it ends.
 */
async function runFill(
  node: string,
  cache: string,
): Promise<{ status: number | null; stdout: string; stderr: string }> {
  const child = spawn(node, [path.join(ROOT, 'scripts/fill-compile-cache.mjs'), cache, 'nobody'], {
    env: { ...process.env, CATALOG_DIR },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  })
  let stdout = ''
  let stderr = ''
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()))
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()))
  try {
    const status = await new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)))
    return { status, stdout, stderr }
  } finally {
    try {
      process.kill(-child.pid!, 'SIGKILL')
    } catch {
      // All gone already.
    }
  }
}

describe.skipIf(NOBODY === undefined)(READ_ONLY_TITLE, () => {
  let server: RunningServer | undefined
  afterEach(async () => {
    await server?.stop('SIGKILL')
    server = undefined
  })

  it("is filled by scripts/fill-compile-cache.mjs, owned by root, and read but never written by the service's user", async () => {
    // A folder only root writes, which nobody may enter, with a Node binary nobody can run.
    const dir = tempDir()
    fs.chmodSync(dir, 0o755)
    const node = path.join(dir, 'node')
    try {
      fs.linkSync(process.execPath, node)
    } catch {
      fs.copyFileSync(process.execPath, node)
      fs.chmodSync(node, 0o755)
    }
    const cache = path.join(dir, 'compile-cache')
    const fill = await runFill(node, cache)
    expect(fill.status, fill.stdout + fill.stderr).toBe(0)
    expect(fill.stdout).toContain("a start as nobody read the server's compiled code from it")
    for (const file of [
      cache,
      ...fs.readdirSync(cache, { recursive: true, encoding: 'utf8' }).map((name) => path.join(cache, name)),
    ]) {
      const stat = fs.lstatSync(file)
      expect(stat.uid, file).toBe(0)
      expect(stat.mode & 0o022, file).toBe(0)
    }
    // Nothing of the fill is left beside the cache.
    expect(fs.readdirSync(dir).sort()).toEqual(['compile-cache', 'node'])
    const before = snapshot(cache)

    const data = path.join(dir, 'data')
    fs.mkdirSync(data)
    fs.chownSync(data, NOBODY!.uid, NOBODY!.gid)
    const debug = path.join(tempDir(), 'stderr.log')
    server = await startServer(
      {
        DATABASE_URL: `sqlite:${path.join(data, 'read-only-cache.db')}`,
        CATALOG_DIR,
        SEED_DEMO: 'false',
        ROSTER_UPLOAD_DIR: path.join(data, 'roster-uploads'),
        COMPILE_CACHE_DIR: cache,
        NODE_DEBUG_NATIVE: 'COMPILE_CACHE',
        LOG_LEVEL: 'debug',
      },
      20_000,
      path.join(ROOT, 'dist/server.js'),
      debug,
      { ...NOBODY!, node },
    )
    expect(server.output()).toContain('compile cache on (read-only)')
    // Stopped, so that Node has done whatever it does with its cache at exit.
    expect(await server.stop('SIGTERM')).toBe(0)
    expect(server.output()).not.toContain('compile cache saved')
    server = undefined
    const lines = fs.readFileSync(debug, 'utf8')
    expect(lines).toMatch(/cache for (?:CommonJS )?\S*server-bundle\.cjs was accepted/)
    expect(lines).not.toMatch(/writing cache|Creating temporary file/)
    expect(snapshot(cache)).toEqual(before)
  })
})

describe('judgeCacheFolder', () => {
  const me = { uid: process.getuid!(), gids: [process.getgid!()] }
  /** A user the test's files do not belong to, in a group of its own. */
  const service = { uid: me.uid + 4242, gids: [me.gids[0]! + 4242] }

  it('takes a folder of its own as read-write, made 0700 when absent', () => {
    const dir = path.join(tempDir(), 'a', 'b')
    expect(judgeCacheFolder(dir, path.join(ROOT, 'dist'), me)).toEqual({ access: 'read-write' })
    expect(fs.statSync(dir).mode & 0o777).toBe(0o700)
  })

  it('refuses a folder inside the code, however it is named, a writable one of its own, a link and a file', () => {
    const code = tempDir()
    const codeLink = path.join(tempDir(), 'code-link')
    fs.symlinkSync(code, codeLink)
    const refusal = (dir: string, user = me) => {
      const judged = judgeCacheFolder(dir, code, user)
      return 'refused' in judged ? judged.refused : judged.access
    }
    expect(refusal(code)).toMatch(/inside the folder the code is loaded from/)
    expect(refusal(path.join(code, 'x', '..', 'cache'))).toMatch(/inside the folder/)
    expect(refusal(path.join(codeLink, 'cache'))).toMatch(/inside the folder/)
    expect(fs.existsSync(path.join(code, 'cache'))).toBe(false)

    const mine = tempDir()
    fs.chmodSync(mine, 0o720)
    expect(refusal(mine)).toMatch(/writable by other users/)
    fs.chmodSync(mine, 0o700)
    const link = path.join(tempDir(), 'link')
    fs.symlinkSync(mine, link)
    expect(refusal(link)).toMatch(/symbolic link/)
    const file = path.join(tempDir(), 'file')
    fs.writeFileSync(file, '')
    expect(refusal(file)).toMatch(/not a directory/)
  })

  it("takes another user's folder as read-only only if the service's user can read it and neither write nor replace it", () => {
    const code = tempDir()
    const judge = (dir: string) => {
      const judged = judgeCacheFolder(dir, code, service)
      return 'refused' in judged ? judged.refused : judged.access
    }
    // A folder as the fill leaves it: another user's, folders 0755 and files 0644 inside.
    const parent = tempDir()
    fs.chmodSync(parent, 0o755)
    const cache = path.join(parent, 'compile-cache')
    fs.mkdirSync(path.join(cache, 'v24-x64-tag'), { recursive: true, mode: 0o755 })
    fs.chmodSync(cache, 0o755)
    const entry = path.join(cache, 'v24-x64-tag', 'e3869413')
    fs.writeFileSync(entry, 'code', { mode: 0o644 })
    expect(judge(cache)).toBe('read-only')

    fs.chmodSync(cache, 0o700)
    expect(judge(cache)).toMatch(/belongs to another user \(uid \d+\) and the service's user cannot read it/)
    fs.chmodSync(cache, 0o775)
    expect(judge(cache)).toBe('read-only')
    // The same folder for a service's user in the folder's group, which may write it.
    const inGroup = { uid: service.uid, gids: [fs.statSync(cache).gid] }
    expect(judgeCacheFolder(cache, code, inGroup)).toEqual({
      refused: expect.stringMatching(/but the service's user can write to it/),
    })
    fs.chmodSync(cache, 0o755)

    fs.chmodSync(entry, 0o666)
    expect(judge(cache)).toMatch(/holds .*e3869413, which the service's user can write/)
    fs.chmodSync(entry, 0o600)
    expect(judge(cache)).toMatch(/holds .*e3869413, which the service's user cannot read/)
    fs.chmodSync(entry, 0o644)
    if (me.uid === 0) {
      // A file of the service's user's own, which it could make writable again.
      fs.chownSync(entry, service.uid, service.gids[0]!)
      expect(judge(cache)).toMatch(/holds .*e3869413, which the service's user can write/)
      fs.chownSync(entry, me.uid, me.gids[0]!)
    }
    fs.symlinkSync(entry, path.join(cache, 'v24-x64-tag', 'planted'))
    expect(judge(cache)).toMatch(/holds a symbolic link/)
    fs.rmSync(path.join(cache, 'v24-x64-tag', 'planted'))
    expect(judge(cache)).toBe('read-only')

    // A folder above that the service's user can write would let it swap in a folder of its own,
    // unless it is sticky (as /tmp is) and the folder on the way is not the user's.
    fs.chmodSync(parent, 0o777)
    expect(judge(cache)).toMatch(/is writable by the service's user, which could replace/)
    fs.chmodSync(parent, 0o1777)
    expect(judge(cache)).toBe('read-only')
    fs.chmodSync(parent, 0o755)
    expect(judge(cache)).toBe('read-only')
  })
})
