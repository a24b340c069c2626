/**
 * The OpenTelemetry span model of a run (`src/report/otel.ts` builds it from a capsule; `src/report/otlp-json.ts`
 * encodes it as OTLP/JSON; the platform's live exporter hands it to the OpenTelemetry SDK). Plain data: ids as
 * lowercase hex, times as nanoseconds since the Unix epoch.
 * @module
 */

/** An attribute value: a string, a boolean, or a safe integer (OTLP `intValue`). */
export type OtelValue = string | boolean | number;

/** One span (OTLP `Span`, with times in nanoseconds since the Unix epoch). */
export type OtelSpan = {
  traceId: string;
  spanId: string;
  parentSpanId: string | null;
  name: string;
  /** OTLP `SpanKind`: 1 INTERNAL, 2 SERVER, 3 CLIENT. */
  kind: 1 | 2 | 3;
  startNs: bigint;
  endNs: bigint;
  attributes: [string, OtelValue][];
  events: { name: string; timeNs: bigint; attributes: [string, OtelValue][] }[];
  links: { traceId: string; spanId: string; attributes: [string, OtelValue][] }[];
  /** OTLP `Status`: 0 UNSET, 1 OK, 2 ERROR. */
  status: { code: 0 | 1 | 2; message?: string };
};

/** One run's trace: its resource, the instrumentation scope, the spans (run first, then in event order). */
export type OtelTrace = { resource: [string, OtelValue][]; scope: { name: string; version: string }; spans: OtelSpan[] };
