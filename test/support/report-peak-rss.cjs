// Preloaded into a child process (node --require): prints its peak resident set size on exit,
// so that a test can bound a command's memory without any tool outside Node.
process.on('exit', () => {
  process.stderr.write(`\npeak-rss-kib=${process.resourceUsage().maxRSS}\n`)
})
