/**
 * What leaves the process in a span: the HTTP instrumentation records URLs, which may carry what
 * a trace must not (a query string with a cursor or a search term, a partner's webhook URL whose
 * path is its secret). Every span passes through `redactSpan` on its way to the exporter, so
 * the rule holds whatever an instrumentation records.
 *
 * Kept: the path of a request to this service (student ids in it are pseudonymous UUIDs, as in
 * the disclosure log). Dropped: every query string, the path of an outgoing request (only its
 * origin is kept), and any recorded header (none is configured; a header attribute would be the
 * one place an Authorization value could appear).
 */
import type { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http'

export type ExportedSpan = Parameters<OTLPTraceExporter['export']>[0][number]
type Attributes = ExportedSpan['attributes']

/** SpanKind.CLIENT in @opentelemetry/api, written out so this module needs no value from it. */
const CLIENT = 2

const URL_KEYS = new Set(['http.url', 'url.full'])
const QUERY_KEYS = new Set(['url.query'])
/** The path alone; on an outgoing request the path is the partner's, and dropped. */
const PATH_KEYS = new Set(['http.target', 'url.path'])

function withoutQuery(value: string): string {
  const end = value.search(/[?#]/)
  return end === -1 ? value : value.slice(0, end)
}

function originOf(value: string): string {
  try {
    return new URL(value).origin
  } catch {
    return ''
  }
}

/** `attributes` without what must not leave the process (see the module comment). */
export function redactAttributes(attributes: Attributes, outgoing: boolean): Attributes {
  const kept: Attributes = {}
  for (const [key, value] of Object.entries(attributes)) {
    if (QUERY_KEYS.has(key) || key.startsWith('http.request.header.') || key.startsWith('http.response.header.'))
      continue
    if (typeof value === 'string' && URL_KEYS.has(key)) kept[key] = outgoing ? originOf(value) : withoutQuery(value)
    else if (typeof value === 'string' && PATH_KEYS.has(key)) {
      if (!outgoing) kept[key] = withoutQuery(value)
    } else kept[key] = value
  }
  return kept
}

/** A copy of `span` whose attributes are redacted; everything else is the span's own. */
export function redactSpan(span: ExportedSpan): ExportedSpan {
  return {
    name: span.name,
    kind: span.kind,
    spanContext: () => span.spanContext(),
    parentSpanContext: span.parentSpanContext,
    startTime: span.startTime,
    endTime: span.endTime,
    status: span.status,
    attributes: redactAttributes(span.attributes, span.kind === CLIENT),
    links: span.links,
    events: span.events,
    duration: span.duration,
    ended: span.ended,
    resource: span.resource,
    instrumentationScope: span.instrumentationScope,
    droppedAttributesCount: span.droppedAttributesCount,
    droppedEventsCount: span.droppedEventsCount,
    droppedLinksCount: span.droppedLinksCount,
  }
}
