/**
 * The service's own spans (admission, request-time writes, webhook deliveries), written against
 * this small interface so that the server bundle never loads OpenTelemetry: tracing.ts, which
 * the entry loads only when `OTEL_EXPORTER_OTLP_ENDPOINT` is set, implements it and the server
 * installs it at start. Until then there is no tracer, and the seams below are not wrapped at
 * all, so an untraced server runs exactly the code it ran before.
 */
/** What a span may carry: never a first name, a key or anything read from a request body. */
export type SpanAttributes = Record<string, string | number | boolean>

/** Lets the work add to its span what it learns while it runs (an outcome, a status). */
export interface SpanNotes {
  set(name: string, value: string | number | boolean): void
}

export interface Spans {
  /**
   * Runs `work` inside a new span, a child of the active one; the span ends when `work` returns
   * or, when it returns a promise, when that settles. An error marks the span and passes on.
   */
  run<T>(name: string, attributes: SpanAttributes, work: (notes: SpanNotes) => T): T
  /** Exports what is still buffered and stops; the server awaits it when it closes. */
  shutdown(): Promise<void>
}

/**
 * Process-wide, as OpenTelemetry's own tracer provider is: the seams it wraps are built in many
 * places (storage engines, admission, the webhook deliverer), and threading one object through
 * all of them would change every constructor for an optional feature.
 */
let installed: Spans | undefined

/** Called once, before storage is opened and the app is built; undefined uninstalls (tests). */
export function installSpans(spans: Spans | undefined): void {
  installed = spans
}

/** The tracer, or undefined when tracing is off (the seams then keep their plain functions). */
export function activeSpans(): Spans | undefined {
  return installed
}
