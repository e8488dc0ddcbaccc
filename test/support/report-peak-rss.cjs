// Preloaded into a child process (node --require): prints on exit its peak resident set size
// and the largest heap it kept through a full collection (what it held, garbage aside: V8's own
// figure, taken as each collection ends), so that a test can bound a command's memory without
// any tool outside Node.
const v8 = require('node:v8')

const profiler = new v8.GCProfiler()
profiler.start()

process.on('exit', () => {
  let kept = 0
  for (const event of profiler.stop()?.statistics ?? []) {
    if (event.gcType === 'MarkSweepCompact') kept = Math.max(kept, event.afterGC.heapStatistics.usedHeapSize)
  }
  process.stderr.write(`\npeak-rss-kib=${process.resourceUsage().maxRSS} live-heap-kib=${Math.round(kept / 1024)}\n`)
})
