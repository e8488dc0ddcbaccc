/**
 * Where metrics are read decides whether they are collected: METRICS_TOKEN (checked for
 * strength), METRICS_PORT (not PORT), neither (off), and METRICS=off over both.
 */
import { describe, expect, it } from 'vitest'
import { ConfigError, loadConfig } from '../../src/config.js'

const TOKEN = 'a'.repeat(32)

describe('metrics configuration', () => {
  it('is off with neither a token nor a port', () => {
    expect(loadConfig({}).metrics).toBe(false)
  })

  it('is on with a token or a port, unless METRICS=off', () => {
    expect(loadConfig({ METRICS_TOKEN: TOKEN })).toMatchObject({ metrics: true, metricsToken: TOKEN })
    expect(loadConfig({ METRICS_PORT: '9464' })).toMatchObject({ metrics: true, metricsPort: 9464 })
    expect(loadConfig({ METRICS_PORT: '9464', METRICS: 'off' }).metrics).toBe(false)
  })

  it('refuses a short token, one with spaces, and the main port', () => {
    expect(() => loadConfig({ METRICS_TOKEN: 'a'.repeat(31) })).toThrow(ConfigError)
    expect(() => loadConfig({ METRICS_TOKEN: `${TOKEN} b` })).toThrow(/at least 32 printable characters/)
    expect(() => loadConfig({ PORT: '3000', METRICS_PORT: '3000' })).toThrow(/must differ from PORT/)
    expect(() => loadConfig({ METRICS: 'maybe' })).toThrow(/METRICS must be one of auto, off/)
  })
})
