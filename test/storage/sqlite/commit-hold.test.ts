/**
 * When a small group commit waits for company: only on a busy event loop, only while waits
 * have been joined by at least one unit on average, and otherwise as a rare probe.
 */
import { describe, expect, it } from 'vitest'
import { BUSY, CommitHold, PROBE_INTERVAL_MS, SMALL_BATCH } from '../../../src/storage/sqlite/commit-hold.js'

function policy(busy = 0.9) {
  const state = { now: 1_000, busy }
  const hold = new CommitHold({ now: () => state.now, busy: () => state.busy })
  return { hold, state }
}

describe('CommitHold', () => {
  it('never holds a batch that already shares its commit, nor on an idle event loop', () => {
    const { hold, state } = policy()
    for (let i = 0; i < 20; i++) hold.held(5)
    expect(hold.shouldHold(SMALL_BATCH - 1)).toBe(true)
    expect(hold.shouldHold(SMALL_BATCH)).toBe(false)
    expect(hold.shouldHold(200)).toBe(false)
    state.busy = BUSY - 0.01
    expect(hold.shouldHold(1)).toBe(false)
  })

  it('with no evidence of company, holds one small batch per probe interval', () => {
    const { hold, state } = policy()
    expect(hold.shouldHold(1)).toBe(true)
    hold.held(0)
    expect(hold.shouldHold(1)).toBe(false)
    state.now += PROBE_INTERVAL_MS - 1
    expect(hold.shouldHold(2)).toBe(false)
    state.now += 1
    expect(hold.shouldHold(2)).toBe(true)
  })

  it('holds every small batch while waits are joined, and stops once they are not', () => {
    const { hold } = policy()
    // Paced arrivals: each probe's wait gathers several units, until holding is the rule.
    let probes = 0
    while (!(hold.shouldHold(1) && hold.shouldHold(1))) {
      hold.held(6)
      probes++
      expect(probes).toBeLessThan(10)
    }
    expect(hold.joiners).toBeGreaterThanOrEqual(1)
    // Clients that wait for their own answers: nobody joins, and within a few waits holding stops.
    let waits = 0
    while (hold.shouldHold(1)) {
      hold.held(0)
      waits++
      expect(waits).toBeLessThan(30)
    }
    expect(waits).toBeGreaterThan(0)
    expect(hold.joiners).toBeLessThan(1)
  })
})
