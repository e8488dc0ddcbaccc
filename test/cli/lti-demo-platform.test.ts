/**
 * `curriculum lti demo-platform`: the built command serves the demo platform's course page until
 * SIGTERM, then exits 0; a wrong port is a usage error. It needs no database.
 */
import { execFile } from 'node:child_process'
import { describe, expect, it } from 'vitest'
import { CLI, cli, environment, newDatabaseUrl, ROOT, useCliHarness } from './cli-harness.js'

useCliHarness()

describe('curriculum lti demo-platform', () => {
  it('serves the course page until SIGTERM, then exits 0', async () => {
    const child = execFile(process.execPath, [CLI, 'lti', 'demo-platform', '--port', '0', '--json'], {
      cwd: ROOT,
      env: environment({ databaseUrl: newDatabaseUrl() }),
      encoding: 'utf8',
    })
    try {
      let stdout = ''
      const started = new Promise<{ url: string }>((resolve, reject) => {
        child.stdout!.on('data', (chunk: string) => {
          stdout += chunk
          if (stdout.includes('\n')) resolve(JSON.parse(stdout) as { url: string })
        })
        child.once('exit', (code) => reject(new Error(`exited ${code} before starting: ${stdout}`)))
      })
      const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)))
      const { url } = await started
      expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/$/)
      const page = await fetch(url)
      expect(page.status).toBe(200)
      expect(await page.text()).toContain('<h1>Demo learning platform</h1>')
      child.kill('SIGTERM')
      expect(await exited).toBe(0)
      await expect(fetch(url)).rejects.toThrow()
    } finally {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL')
    }
  }, 30_000)

  it('refuses a port out of range as a usage error', async () => {
    const result = await cli(['lti', 'demo-platform', '--port', '70000', '--json'], { databaseUrl: newDatabaseUrl() })
    expect(result.status).toBe(2)
    expect(result.stdout).toContain('a port number')
  })
})
