/**
 * The shipped unit (deploy/curriculum-api.service) passes `systemd-analyze verify`, with this
 * checkout in place of /opt/curriculum-api and this Node in place of /usr/bin/node, so that the
 * check covers the command the unit starts, and keeps its hardening (`systemd-analyze security`);
 * the compile cache the shipped environment names is one the unit lets the service read only.
 *
 * Skipped, with the reason in its title, where systemd-analyze is not installed.
 */
import { spawnSync } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { tempDir } from '../helper.js'
import { ROOT } from './process.js'

const ANALYZE = '/usr/bin/systemd-analyze'
const HAS_ANALYZE = fs.existsSync(ANALYZE)
const TITLE = HAS_ANALYZE
  ? 'the systemd unit'
  : `the systemd unit (skipped: ${ANALYZE} not found; it comes with systemd)`
const UNIT = fs.readFileSync(path.join(ROOT, 'deploy/curriculum-api.service'), 'utf8')

/** The unit as installed from this checkout: its paths real, its environment file a copy of the shipped one. */
function renderUnit(dir: string, node = process.execPath): string {
  const envFile = path.join(dir, 'env')
  fs.copyFileSync(path.join(ROOT, 'deploy/curriculum-api.env'), envFile)
  const file = path.join(dir, 'curriculum-api.service')
  fs.writeFileSync(
    file,
    UNIT.replaceAll('/opt/curriculum-api', ROOT)
      .replace('ExecStart=/usr/bin/node ', `ExecStart=${node} `)
      .replace('EnvironmentFile=/etc/curriculum-api/env', `EnvironmentFile=${envFile}`),
  )
  return file
}

function analyze(...args: string[]) {
  const run = spawnSync(ANALYZE, args, { encoding: 'utf8' })
  return { status: run.status, output: `${run.stdout}${run.stderr}`.trim() }
}

describe.skipIf(!HAS_ANALYZE)(TITLE, () => {
  it('passes systemd-analyze verify without a warning, with the script it starts where it says', () => {
    const unit = renderUnit(tempDir('systemd-unit-'))
    expect(analyze('verify', unit)).toEqual({ status: 0, output: '' })
    // verify checks the binary, not its arguments: the script must be where the unit says.
    const [, script] = /^ExecStart=\S+ (\S+)$/m.exec(UNIT)!
    const workingDirectory = /^WorkingDirectory=(\S+)$/m.exec(fs.readFileSync(unit, 'utf8'))![1]!
    expect(fs.existsSync(path.join(workingDirectory, script!))).toBe(true)
  })

  it('fails verify when the command it starts is not there (the check above can fail)', () => {
    const unit = renderUnit(tempDir('systemd-unit-'), '/nonexistent/node')
    expect(analyze('verify', unit).output).toMatch(/\/nonexistent\/node is not executable/)
  })

  it('keeps its hardening: an exposure of 2.0 or less in systemd-analyze security', () => {
    const unit = renderUnit(tempDir('systemd-unit-'))
    const security = analyze('security', '--offline=true', '--threshold=20', unit)
    expect(security.status, security.output).toBe(0)
    expect(security.output).toMatch(/Overall exposure level for curriculum-api\.service: [0-2]\.\d OK/)
    for (const line of ['NoNewPrivileges=yes', 'ProtectSystem=strict', 'PrivateTmp=yes', 'UMask=0077'])
      expect(UNIT).toContain(`\n${line}\n`)
    expect(UNIT).toContain('\nReadWritePaths=/opt/curriculum-api/data\n')
  })
})

describe('the shipped environment with the unit', () => {
  const env = fs.readFileSync(path.join(ROOT, 'deploy/curriculum-api.env'), 'utf8')

  it('keeps the compile cache where the service cannot write: outside every ReadWritePaths, under ProtectSystem=strict', () => {
    const cache = /^COMPILE_CACHE_DIR=(.*)$/m.exec(env)?.[1]
    expect(cache, 'deploy/curriculum-api.env sets COMPILE_CACHE_DIR').toBeDefined()
    expect(path.isAbsolute(cache!)).toBe(true)
    expect(UNIT).toMatch(/^ProtectSystem=strict$/m)
    const writable = [...UNIT.matchAll(/^ReadWritePaths=(.*)$/gm)].flatMap((match) => match[1]!.split(/\s+/))
    expect(writable.length).toBeGreaterThan(0)
    for (const folder of writable) {
      const relative = path.relative(folder.replace(/^-/, ''), cache!)
      expect(relative.startsWith('..') || path.isAbsolute(relative), `${cache} is under ${folder}`).toBe(true)
    }
  })
})
