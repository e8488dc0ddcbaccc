/**
 * CPU pinning with taskset: the service on one core and wrk on the other, so the load generator
 * never steals the service's CPU and every run measures the same one-core service.
 */
import { spawnSync } from 'node:child_process'

export const SERVER_CPU = 0
export const LOAD_CPU = 1

let available

export function hasTaskset() {
  available ??= spawnSync('taskset', ['-c', '0', 'true']).status === 0
  return available
}

/** [command, args] that run `command` on `cpu`, or unpinned when taskset is missing. */
export function pinned(cpu, command, args) {
  if (cpu === undefined || !hasTaskset()) return [command, args]
  return ['taskset', ['-c', String(cpu), command, ...args]]
}
