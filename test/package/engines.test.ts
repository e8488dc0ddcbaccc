/**
 * Every installed package runs on every Node.js the project supports: the floor in package.json
 * (22.12) and the current release users run (24). `npm install` warns of a package that
 * does not (cookie 2 wanted Node 22 while the README said 20.19).
 */
import fs from 'node:fs'
import { createRequire } from 'node:module'
import path from 'node:path'
import { describe, expect, it } from 'vitest'

const ROOT = path.resolve(import.meta.dirname, '../..')
const semver = createRequire(import.meta.url)('semver') as {
  satisfies(version: string, range: string): boolean
  minVersion(range: string): { version: string } | null
}

interface LockedPackage {
  version?: string
  engines?: { node?: string } | string[]
}

describe('engines', () => {
  const manifest = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { engines: { node: string } }
  const lock = JSON.parse(fs.readFileSync(path.join(ROOT, 'package-lock.json'), 'utf8')) as {
    packages: Record<string, LockedPackage>
  }
  const floor = semver.minVersion(manifest.engines.node)!.version
  const supported = [floor, '24.0.0']

  it(`every installed package accepts Node ${supported.join(', ')}`, () => {
    expect(floor).toBe('22.12.0')
    const refusing: string[] = []
    for (const [where, locked] of Object.entries(lock.packages)) {
      const range = Array.isArray(locked.engines) ? undefined : locked.engines?.node
      // Platform-specific optional packages that npm did not install here do not run here.
      if (where === '' || range === undefined || !fs.existsSync(path.join(ROOT, where))) continue
      for (const version of supported)
        if (!semver.satisfies(version, range))
          refusing.push(`${where}@${locked.version} wants node ${range}, not ${version}`)
    }
    expect(refusing).toEqual([])
  })
})
