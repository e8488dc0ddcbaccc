/**
 * `npm run build` compiles every file with tsc (the CLI and the bench import those), then
 * bundles the server into one file, dist/server-bundle.cjs, and its entry, dist/server.js, which
 * `node dist/server.js` runs (server-entry.ts: it turns Node's compile cache on, then loads the
 * bundle).
 *
 * Why one file: a start on an existing database was mostly module loading: about 1,100 files
 * (TypeBox, Kysely, ours, Fastify and its dependencies), each resolved, read and compiled on its
 * own. One file takes a fraction of that. CommonJS, because Node's compile cache serves it more
 * of the start than it does an ES module (docs/performance.md, "Start").
 *
 * The `curriculum` command is bundled the same way, into dist/cli/index.js over the file tsc wrote
 * there: one ES module (its entry awaits at the top level), loaded with every command's code,
 * since a start of the tsc output was mostly loading TypeBox's and Kysely's files one by one
 * (docs/performance.md, "The command's start"). It takes no compile cache: a cache folder the
 * operator's command would trust is a way in (docs/security.md).
 *
 * Left outside the bundle, loaded from node_modules as before: the native SQLite driver,
 * drivers loaded only when configured (pg, ioredis, nodemailer; storage/postgres/open-postgres.ts,
 * redis-client.ts and mail/smtp-sender.ts require them at run time), pino with the modules its
 * transports start as worker threads by file name (pino-pretty on a terminal), and OpenTelemetry,
 * which only observability/tracing.ts loads, outside the bundle, so that an untraced start never
 * reads it (a test watches the modules loaded).
 */
import { defineConfig } from 'rolldown'

const EXTERNAL =
  /^(node:|@opentelemetry\/|(better-sqlite3|pg|ioredis|nodemailer|pino|pino-pretty|thread-stream|sonic-boom)(\/|$))/

const NODE = { platform: 'node', tsconfig: 'tsconfig.build.json', transform: { target: 'es2023' } } as const

export default defineConfig([
  {
    ...NODE,
    input: 'src/server.ts',
    external: (id) => EXTERNAL.test(id),
    output: {
      dir: 'dist',
      format: 'cjs',
      entryFileNames: 'server-bundle.cjs',
      // One file, the demo seed included (its functions are compiled only on a first start): as
      // a chunk of its own it shares modules with the rest, which rolldown then puts in a third
      // file loaded at every start.
      codeSplitting: false,
      sourcemap: true,
      // V8 keeps the bundle's source text for the life of the process (functions compile when
      // first called). Escaped non-ASCII characters keep it a one-byte string, and without the
      // JSDoc and annotation comments it is shorter (test/package/bundle-latin1.test.ts keeps it
      // Latin-1).
      charset: 'ascii',
      comments: { legal: true, annotation: false, jsdoc: false },
    },
  },
  {
    ...NODE,
    input: 'src/cli/index.ts',
    external: (id) => EXTERNAL.test(id),
    output: {
      dir: 'dist/cli',
      format: 'esm',
      entryFileNames: 'index.js',
      codeSplitting: false,
      sourcemap: true,
      charset: 'ascii',
      comments: { legal: true, annotation: false, jsdoc: false },
    },
  },
  {
    // Node's own modules and three small ones of ours; the bundle is loaded at run time.
    ...NODE,
    input: 'src/server-entry.ts',
    external: (id) => id.startsWith('node:'),
    output: { dir: 'dist', format: 'esm', entryFileNames: 'server.js', sourcemap: true },
  },
])
