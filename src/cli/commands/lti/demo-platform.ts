/**
 * `curriculum lti demo-platform`: runs the demo learning platform (src/demo/lti-platform.ts) on
 * this machine until interrupted, so a person can register the tool, add a lesson, launch it and
 * see the score come back without a real platform. It touches no database.
 */
import { type Command, InvalidArgumentError } from 'commander'
import { reportError } from '../../command-action.js'
import { defineCommand } from '../../options.js'
import { CliError, writeJson, writeText } from '../../output.js'

export const DEMO_PLATFORM_PORT = 3100

function portOption(text: string): number {
  const port = Number(text)
  if (!/^\d+$/.test(text) || port > 65535) throw new InvalidArgumentError('a port number, 0 (any free one) to 65535')
  return port
}

export function defineLtiDemoPlatform(lti: Command): void {
  defineCommand(
    lti,
    'demo-platform',
    'Run a demo learning platform on this machine, for trying the LTI tool (the service needs LTI_ALLOW_LOOPBACK=true)',
    ['curriculum lti demo-platform', 'curriculum lti demo-platform --port 3200'],
  )
    .option(
      '--port <port>',
      `port to listen on (127.0.0.1; 0: any free one), default ${DEMO_PLATFORM_PORT}`,
      portOption,
    )
    .action(async (options: { port?: number; json?: boolean }, command: Command) => {
      const json = command.optsWithGlobals().json === true
      try {
        await run(options.port ?? DEMO_PLATFORM_PORT, json)
      } catch (error) {
        await reportError(json, error)
      }
    })
}

/** Until SIGINT or SIGTERM. */
function interrupted(): Promise<string> {
  return new Promise((resolve) => {
    const stop = (signal: string) => {
      process.off('SIGINT', stop)
      process.off('SIGTERM', stop)
      resolve(signal)
    }
    process.on('SIGINT', stop)
    process.on('SIGTERM', stop)
  })
}

async function run(port: number, json: boolean): Promise<void> {
  const [{ TestPlatform }, { addDemoPages }] = await Promise.all([
    import('../../../demo/lti-platform.js'),
    import('../../../demo/lti-platform-pages.js'),
  ])
  const platform = new TestPlatform({ port, product: 'demo-platform' })
  addDemoPages(platform)
  try {
    await platform.start()
  } catch (error) {
    const code = (error as { code?: string }).code
    if (code === 'EADDRINUSE') throw new CliError(`port ${port} is taken; choose another with --port`)
    throw error
  }
  const signal = interrupted()
  const url = `${platform.origin}/`
  if (json) writeJson({ ok: true, url, issuer: platform.issuer, clientId: platform.clientId })
  else
    writeText([
      `the demo learning platform is at ${url} (Ctrl-C stops it; it keeps nothing)`,
      'the service must run with LTI_ALLOW_LOOPBACK=true, e.g. LTI_ALLOW_LOOPBACK=true npm start',
      '1. dashboard -> LTI -> New registration URL for "Demo Partner (demo data)" -> Make a registration URL',
      `2. paste it under "Register a tool" at ${url}; the tool's page says the registration waits`,
      '3. dashboard -> LTI -> the registration -> Activate',
      '4. "Add a lesson" on the course page: pick a lesson, Add to the course',
      '5. "Open as student Ada": work through the lesson and finish it',
      '6. reload the course page: the gradebook shows the completed score (docs/lti.md)',
    ])
  await signal
  await platform.stop()
}
