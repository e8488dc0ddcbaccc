/**
 * What /proc says about the server while it is under load: peak resident memory (VmHWM, which
 * Linux lets root reset between scenarios by writing 5 to clear_refs), CPU time, and how busy
 * each core was (to show whether the service or the load generator was the limit).
 */
import fs from 'node:fs'
import os from 'node:os'

const TICKS_PER_SECOND = 100 // USER_HZ on every Linux this runs on

function read(file) {
  try {
    return fs.readFileSync(file, 'utf8')
  } catch {
    return undefined
  }
}

/** The process and its children (the cluster workers), by pid. */
export function processTree(pid) {
  const children = (read(`/proc/${pid}/task/${pid}/children`) ?? '').trim().split(/\s+/).filter(Boolean).map(Number)
  return [pid, ...children.flatMap((child) => processTree(child))]
}

/** Peak RSS in MB since the last reset, or undefined when the process is gone. */
export function peakRssMb(pid) {
  const kb = /VmHWM:\s+(\d+) kB/.exec(read(`/proc/${pid}/status`) ?? '')?.[1]
  return kb === undefined ? undefined : Number(kb) / 1024
}

/** Current RSS in MB (VmRSS). */
export function rssMb(pid) {
  const kb = /VmRSS:\s+(\d+) kB/.exec(read(`/proc/${pid}/status`) ?? '')?.[1]
  return kb === undefined ? undefined : Number(kb) / 1024
}

/** Starts a new peak-RSS measurement; false where the kernel or permissions do not allow it. */
export function resetPeakRss(pid) {
  try {
    fs.writeFileSync(`/proc/${pid}/clear_refs`, '5')
    return true
  } catch {
    return false
  }
}

/** User + system CPU seconds the process has used. */
export function cpuSeconds(pid) {
  const stat = read(`/proc/${pid}/stat`)
  if (stat === undefined) return 0
  // Fields after the parenthesised command name; utime and stime are fields 14 and 15.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
  return (Number(fields[11]) + Number(fields[12])) / TICKS_PER_SECOND
}

/**
 * Ticks of one core from /proc/stat: busy (user, nice, system, irq, softirq), stolen by the
 * hypervisor (steal: another tenant had the core), and the total.
 */
export function coreTicks(cpu) {
  const line = (read('/proc/stat') ?? '').split('\n').find((l) => l.startsWith(`cpu${cpu} `))
  if (line === undefined) return { busy: 0, steal: 0, total: 0 }
  const [user, nice, system, idle, iowait, irq, softirq, steal = 0] = line.trim().split(/\s+/).slice(1).map(Number)
  const busy = user + nice + system + irq + softirq
  return { busy, steal, total: busy + idle + iowait + steal }
}

/** Samples taken before a scenario; `finish()` returns the figures for the interval since. */
export function startSampling(pid, cores = [0, 1]) {
  const tree = processTree(pid)
  for (const p of tree) resetPeakRss(p)
  const cpuBefore = tree.map((p) => cpuSeconds(p))
  const coresBefore = cores.map((c) => coreTicks(c))
  const started = performance.now()
  return {
    finish() {
      const seconds = (performance.now() - started) / 1000
      const peaks = tree.map((p) => peakRssMb(p) ?? 0)
      const cpu = tree.reduce((sum, p, i) => sum + Math.max(0, cpuSeconds(p) - cpuBefore[i]), 0)
      const coreBusy = {}
      const coreSteal = {}
      cores.forEach((c, i) => {
        const now = coreTicks(c)
        const total = now.total - coresBefore[i].total
        coreBusy[c] = total > 0 ? (now.busy - coresBefore[i].busy) / total : 0
        coreSteal[c] = total > 0 ? (now.steal - coresBefore[i].steal) / total : 0
      })
      return {
        // One process, or the largest worker: what one process needs.
        peakRssMb: tree.length === 1 ? peaks[0] : Math.max(...peaks.slice(1)),
        peakRssTotalMb: peaks.reduce((a, b) => a + b, 0),
        processes: tree.length,
        serverCpu: cpu / seconds,
        coreBusy,
        coreSteal,
      }
    },
  }
}

export function machine() {
  const cpuinfo = read('/proc/cpuinfo') ?? ''
  return {
    nproc: os.availableParallelism(),
    cpuModel: /model name\s*:\s*(.+)/.exec(cpuinfo)?.[1]?.trim() ?? os.cpus()[0]?.model ?? 'unknown',
    memoryGb: os.totalmem() / 2 ** 30,
    node: process.version,
    kernel: os.release(),
  }
}
