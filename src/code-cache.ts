/**
 * Loads a CommonJS file through V8's code cache: the bytecode of every function compiled by the
 * time `save()` is called, kept beside the file and handed back to V8 at the next start.
 *
 * Why: a start on an existing database was mostly compiling the server bundle (2.2 MB): V8
 * parsing it whole, then each function as it is first called (83 and 61 ms under --cpu-prof on
 * a slow machine, where a start took a median of 412 ms; 307 ms with the cache). Node 20 has no code
 * cache for ES modules (Node 22's `module.enableCompileCache` has), so the bundle is CommonJS
 * and compiled here with `vm.Script`, whose `cachedData` every Node since 10 accepts.
 *
 * V8 checks a cache against its own version and flags, but of the source only the length, and
 * a release build does not check the cache's own checksum (a changed byte in the middle of the
 * code is taken as it is). So the cache file starts with CRC-32s of the source's bytes and of
 * the cache, and the source's length: a rebuilt bundle never runs another bundle's code, nor a
 * damaged file wrong code. A cache that does not fit is ignored, the source compiled as it is,
 * and `save()` writes a new one.
 */
import fs from 'node:fs'
import { createRequire, Module } from 'node:module'
import path from 'node:path'
import vm from 'node:vm'
import { crc32 } from 'node:zlib'

/**
 * What became of the cache at load: `used`; `absent` (none yet, or unreadable); `stale` (made
 * for another source, or damaged); `rejected` by V8 (another V8 version, or other V8 flags).
 */
export type CacheState = 'used' | 'absent' | 'stale' | 'rejected'

export interface CachedModule {
  /** The file's `module.exports`. */
  readonly exports: unknown
  readonly cache: CacheState
  /**
   * Writes what V8 has compiled of the file so far, for the next start, unless the cache was
   * used. Atomic (a reader sees the old file or the new one); never throws: a folder that is
   * not writable only means the next start compiles again. Whether it wrote.
   */
  save(): boolean
}

/**
 * The CRC-32 of the source's bytes, the source's length (UTF-16 units) and the CRC-32 of V8's
 * data that follows, each 4 bytes little-endian.
 */
const HEADER_BYTES = 12

export function loadCachedModule(file: string, cacheFile = `${file}.cache`): CachedModule {
  const bytes = fs.readFileSync(file)
  // Of the bytes: a sum of the text would encode it to UTF-8 again first.
  const sum = crc32(bytes)
  const source = bytes.toString('utf8')
  // Only the length is kept for `save`: V8 holds the wrapped source, and the text need not be held twice.
  const length = source.length
  let state: CacheState = 'absent'
  let cachedData: Buffer | undefined
  try {
    const stored = fs.readFileSync(cacheFile)
    const data = stored.subarray(HEADER_BYTES)
    if (
      stored.length > HEADER_BYTES &&
      stored.readUInt32LE(0) === sum &&
      stored.readUInt32LE(4) === length &&
      stored.readUInt32LE(8) === crc32(data)
    ) {
      cachedData = data
    } else state = 'stale'
  } catch {
    // No cache yet.
  }
  const script = new vm.Script(Module.wrap(source), {
    filename: file,
    ...(cachedData === undefined ? {} : { cachedData }),
  })
  if (cachedData !== undefined) state = script.cachedDataRejected === true ? 'rejected' : 'used'
  const wrapper = script.runInThisContext() as (
    exports: unknown,
    require: NodeJS.Require,
    module: { exports: unknown },
    filename: string,
    dirname: string,
  ) => void
  const module = { exports: {} as unknown }
  wrapper.call(module.exports, module.exports, createRequire(file), module, file, path.dirname(file))
  return {
    exports: module.exports,
    cache: state,
    save() {
      if (state === 'used') return false
      const temporary = `${cacheFile}.${process.pid}.tmp`
      try {
        const data = script.createCachedData()
        const header = Buffer.alloc(HEADER_BYTES)
        header.writeUInt32LE(sum, 0)
        header.writeUInt32LE(length, 4)
        header.writeUInt32LE(crc32(data), 8)
        fs.writeFileSync(temporary, Buffer.concat([header, data]))
        fs.renameSync(temporary, cacheFile)
        return true
      } catch {
        fs.rmSync(temporary, { force: true })
        return false
      }
    },
  }
}
