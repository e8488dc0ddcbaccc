/**
 * Three projects: every suite on SQLite; the HTTP suites again on SQLite with the fast path off
 * (`sqlite-plain`, the router alone); and the storage, cases and HTTP suites again on PostgreSQL (each
 * test in a schema of its own). The HTTP suites talk to the app over a real socket, so the first
 * and third answer through the fast path wherever it applies. Suites that need a service that is
 * not running are skipped, and the run says which and why.
 */
import { existsSync } from 'node:fs'
import net from 'node:net'
import { defineConfig } from 'vitest/config'

const POSTGRES_URL = process.env.TEST_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/test'
const REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379'

function reachable(url: string, defaultPort: number): Promise<boolean> {
  const { hostname, port } = new URL(url)
  return new Promise((resolve) => {
    const socket = net.connect({ host: hostname, port: Number(port || defaultPort) })
    const done = (ok: boolean) => {
      socket.destroy()
      resolve(ok)
    }
    socket.setTimeout(1000, () => done(false))
    socket.once('connect', () => done(true))
    socket.once('error', () => done(false))
  })
}

/** The HTTP suites: everything that sends requests to the app (test/helper.ts's buildTestApp or listeningApp). */
const HTTP_SUITES = [
  'test/http/**/*.test.ts',
  'test/services/services.test.ts',
  'test/services/key-cache.test.ts',
  'test/storage/storage-faults.test.ts',
]

/**
 * Not run again with the fast path off: suites that build both paths within themselves, and
 * suites that never start the app (pure functions, node:http alone, or PostgreSQL only).
 */
const NOT_ON_ONE_PATH = [
  'test/http/fast-path.test.ts',
  'test/http/request-log.test.ts',
  'test/http/path-disguises.test.ts',
  'test/http/concurrent-enrolls.test.ts',
  'test/http/change-feed-instances.test.ts',
  'test/http/bearer-header.test.ts',
  'test/http/docs-rendering.test.ts',
  'test/http/problem-json.test.ts',
  'test/http/progress-body.test.ts',
  'test/http/response-serializers.test.ts',
]

/** The request path of the sqlite and postgres projects: the fast path, unless TEST_REQUEST_PATH asks for another. */
const FAST_UNLESS_ASKED = process.env.TEST_REQUEST_PATH || 'fast'

const shared = {
  // Real databases and real processes: give each file room.
  testTimeout: 30_000,
  hookTimeout: 60_000,
  pool: 'forks' as const,
}

/**
 * Three files at a time even on two cores (vitest's default there is one): most of a file's time
 * is spent waiting on servers, child processes and databases, not on its own CPU, and a third
 * file fills what two leave idle (figures: docs/testing.md).
 */
const MAX_WORKERS = 3

/**
 * What `npm test` (`vitest run --coverage`) measures: the lines of src/ that tests run in their own
 * process. A child process (the CLI from dist/, a spawned server) is not measured. Only a summary
 * is printed; the raw data goes to the gitignored coverage/ folder.
 */
const COVERAGE = {
  provider: 'v8' as const,
  include: ['src/**/*.ts'],
  reporter: ['text-summary'],
  reportsDirectory: 'coverage',
  // The figure is printed even when a test failed.
  reportOnFailure: true,
}

export default defineConfig(async () => {
  const postgres = await reachable(POSTGRES_URL, 5432)
  const redis = await reachable(REDIS_URL, 6379)
  if (!postgres)
    console.warn(
      `\n[services] PostgreSQL is not reachable at ${POSTGRES_URL}: the PostgreSQL project and the multi-instance suites are skipped.\n`,
    )
  if (!existsSync(process.env.CHROMIUM_PATH ?? '/usr/bin/chromium')) {
    console.warn(
      '\n[services] Chromium is not installed (apt-get install chromium): the dashboard browser tests are skipped.\n',
    )
  }
  if (!redis)
    console.warn(
      `\n[services] Redis is not reachable at ${REDIS_URL}: the shared rate-limit and multi-instance suites are skipped.\n`,
    )
  const env = {
    TEST_POSTGRES_URL: postgres ? POSTGRES_URL : '',
    TEST_REDIS_URL: redis ? REDIS_URL : '',
  }
  return {
    test: {
      reporters: ['default'],
      maxWorkers: MAX_WORKERS,
      coverage: COVERAGE,
      projects: [
        {
          test: {
            ...shared,
            name: 'sqlite',
            // As the other two projects: every test builds its own app and database, so the
            // files can share a worker's modules instead of importing the app again for each.
            isolate: false,
            include: ['test/**/*.test.ts'],
            globalSetup: ['test/global-setup.ts'],
            env: { ...env, TEST_REQUEST_PATH: FAST_UNLESS_ASKED },
          },
        },
        {
          test: {
            ...shared,
            name: 'sqlite-plain',
            // The suites share a worker's modules instead of importing the app again for each
            // file: each test builds its own app and database, and the import was most of the
            // project's cost.
            isolate: false,
            include: HTTP_SUITES,
            exclude: NOT_ON_ONE_PATH,
            env: { ...env, TEST_REQUEST_PATH: 'plain' },
          },
        },
        ...(postgres
          ? [
              {
                test: {
                  ...shared,
                  name: 'postgres',
                  // As sqlite-plain: every test builds its own app on a schema of its own.
                  isolate: false,
                  include: [
                    'test/http/**/*.test.ts',
                    'test/services/**/*.test.ts',
                    'test/storage/**/*.test.ts',
                    'test/cases/**/*.test.ts',
                    'test/lti/**/*.test.ts',
                  ],
                  // Redis only: nothing about the database engine to test twice.
                  exclude: ['test/storage/redis-limiter.test.ts'],
                  env: { ...env, TEST_DATABASE_URL: POSTGRES_URL, TEST_REQUEST_PATH: FAST_UNLESS_ASKED },
                },
              },
            ]
          : []),
      ],
    },
  }
})
