/**
 * The cheap tier (`npm run test:unit`): the tests that run in this process alone. No build
 * (dist/), no child process, no network service (PostgreSQL, Redis, nginx, Chromium) and no HTTP
 * server: pure functions, and cases and storage over SQLite files in temp folders. The same files run again
 * in `npm test` (vitest.config.ts); this config only picks them out, so it never changes that run.
 */
import { defineConfig } from 'vitest/config'

/** Files that build nothing, start nothing and listen on nothing. */
export const UNIT_TESTS = [
  'test/domain/**/*.test.ts',
  'test/cases/**/*.test.ts',
  'test/catalog/**/*.test.ts',
  'test/cases/**/*.test.ts',
  'test/config/**/*.test.ts',
  'test/imports/**/*.test.ts',
  'test/roster/**/*.test.ts',
  'test/observability/metrics-config.test.ts',
  'test/observability/metrics-registry.test.ts',
  'test/observability/tracing-redaction.test.ts',
  'test/cli/confirm.test.ts',
  'test/cli/dates.test.ts',
  'test/docs/code-examples.test.ts',
  'test/http/bearer-header.test.ts',
  'test/http/docs-rendering.test.ts',
  'test/http/problem-json.test.ts',
  'test/http/response-serializers.test.ts',
  'test/package/engines.test.ts',
  'test/package/import-graph.test.ts',
  'test/package/line-length.test.ts',
  'test/package/unit-tier.test.ts',
  'test/storage/sqlite/commit-hold.test.ts',
  'test/storage/sqlite/schema-differences.test.ts',
  'test/storage/agreement-terms.test.ts',
  'test/storage/change-feed-retention.test.ts',
  'test/storage/clustered-progress.test.ts',
  'test/storage/disclosure-log.test.ts',
  'test/storage/disclosure-report.test.ts',
  'test/storage/disclosure-retention.test.ts',
  'test/storage/engine-folders.test.ts',
  'test/storage/migration-state.test.ts',
  'test/storage/roster-import.test.ts',
  'test/storage/roster-scope.test.ts',
  'test/storage/row-order.test.ts',
  'test/storage/sandbox-links.test.ts',
  'test/storage/shares-migration.test.ts',
  'test/storage/student-change-log.test.ts',
  'test/storage/student-notices-feed.test.ts',
  'test/storage/student-reads.test.ts',
  'test/storage/transaction-locks.test.ts',
  'test/services/key-usage.test.ts',
  'test/cases/**/*.test.ts',
]

export default defineConfig({
  test: {
    name: 'unit',
    include: UNIT_TESTS,
    reporters: ['default'],
    pool: 'forks',
    isolate: false,
    maxWorkers: 2,
    testTimeout: 10_000,
    // No global setup: nothing here needs dist/. Every service is named absent, so storage runs on
    // SQLite in temp folders whatever the shell has set.
    env: { TEST_DATABASE_URL: '', TEST_POSTGRES_URL: '', TEST_REDIS_URL: '' },
  },
})
