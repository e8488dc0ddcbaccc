/**
 * OpenTelemetry for the server: the Node SDK with the HTTP, pg and ioredis instrumentations,
 * exporting over OTLP/HTTP to `OTEL_EXPORTER_OTLP_ENDPOINT` (the exporter and the SDK read the
 * other OTEL_* variables themselves: docs/configuration.md).
 *
 * Loaded by server-entry.ts only when that variable is set, and before the server bundle, since
 * an instrumentation patches a module when it is first required: pg, ioredis and node:http are
 * required by the bundle after this has run. Not part of the bundle; when tracing is off,
 * nothing of OpenTelemetry is ever read from disk.
 */
import { context, SpanStatusCode, trace } from '@opentelemetry/api'
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http'
import { HttpInstrumentation } from '@opentelemetry/instrumentation-http'
import { IORedisInstrumentation } from '@opentelemetry/instrumentation-ioredis'
import { PgInstrumentation } from '@opentelemetry/instrumentation-pg'
import { NodeSDK } from '@opentelemetry/sdk-node'
import type { SpanAttributes, Spans } from '../instrumentation/spans.js'
import { redactSpan } from './tracing-redaction.js'

const SERVICE_NAME = 'curriculum-api'

/** The OTLP/HTTP exporter, with every span redacted on its way out (tracing-redaction.ts). */
class RedactingExporter extends OTLPTraceExporter {
  override export(...[spans, done]: Parameters<OTLPTraceExporter['export']>): void {
    super.export(spans.map(redactSpan), done)
  }
}

function fail(span: ReturnType<ReturnType<typeof trace.getTracer>['startSpan']>, error: unknown): never {
  span.recordException(error instanceof Error ? error : String(error))
  span.setStatus({ code: SpanStatusCode.ERROR })
  span.end()
  throw error
}

/** Starts the SDK and returns the service's own spans over it. */
export function startTracing(): Spans {
  const sdk = new NodeSDK({
    serviceName: process.env.OTEL_SERVICE_NAME?.trim() || SERVICE_NAME,
    traceExporter: new RedactingExporter(),
    // Traces only: left unset, the SDK would also export metrics and logs to the same endpoint.
    metricReaders: [],
    logRecordProcessors: [],
    instrumentations: [
      // No header is recorded (headersToSpanAttributes is left unset), so no Authorization value.
      new HttpInstrumentation(),
      // Parameter values stay out of spans (enhancedDatabaseReporting is off by default).
      new PgInstrumentation(),
      // The command's name only: its arguments are keys and values of ours (limiter windows, key hashes).
      new IORedisInstrumentation({ dbStatementSerializer: (command) => command }),
    ],
  })
  sdk.start()
  const tracer = trace.getTracer(SERVICE_NAME)
  return {
    run(name: string, attributes: SpanAttributes, work) {
      const span = tracer.startSpan(name, { attributes })
      const notes = { set: (key: string, value: string | number | boolean) => span.setAttribute(key, value) }
      let result: ReturnType<typeof work>
      try {
        result = context.with(trace.setSpan(context.active(), span), work, undefined, notes)
      } catch (error) {
        fail(span, error)
      }
      if (!(result instanceof Promise)) {
        span.end()
        return result
      }
      return result.then(
        (value: unknown) => {
          span.end()
          return value
        },
        (error: unknown) => fail(span, error),
      ) as typeof result
    },
    shutdown: () => sdk.shutdown(),
  }
}
