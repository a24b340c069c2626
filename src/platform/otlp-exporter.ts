/**
 * The live OpenTelemetry export (`--otlp-endpoint URL` of `run`, `mcp`, `serve`, `worker`): a run's spans (the model
 * of `src/protocol/otel.ts`) posted to an OTLP/HTTP endpoint through the official OpenTelemetry JavaScript SDK's
 * exporter (`@opentelemetry/exporter-trace-otlp-http`: OTLP/JSON, `Content-Type: application/json`). The SDK is
 * imported on first use only, so a command without `--otlp-endpoint` never loads it. Nothing here is on a hashed
 * path: the spans are built from a run that has ended, and a failed export is reported, never thrown.
 * @module
 */
import type { OTLPTraceExporter } from "@opentelemetry/exporter-trace-otlp-http";
import type { OtelSpan, OtelTrace, OtelValue } from "../protocol/mod.ts";

type Exporter = OTLPTraceExporter; // a type only: the SDK itself is imported on first use
type ReadableSpan = Parameters<Exporter["export"]>[0][number];
type Resource = ReadableSpan["resource"];

/** Options of {@link exportOtlpTraces}. */
export type OtlpExportOptions = {
  /** Give up after this long (ms, default 5000): the SDK's own timeout, its retries included. */
  timeoutMs?: number;
};

const hrTime = (ns: bigint): [number, number] => [Number(ns / 1_000_000_000n), Number(ns % 1_000_000_000n)];

const attrs = (list: readonly [string, OtelValue][]): Record<string, OtelValue> => Object.fromEntries(list);

/** Our span as the SDK's `ReadableSpan` (its `SpanKind` counts from INTERNAL = 0; OTLP's from 1). */
function readable(s: OtelSpan, resource: Resource, scope: OtelTrace["scope"]): ReadableSpan {
  const context = { traceId: s.traceId, spanId: s.spanId, traceFlags: 1 };
  return {
    name: s.name,
    kind: s.kind - 1,
    spanContext: () => context,
    ...(s.parentSpanId === null ? {} : { parentSpanContext: { traceId: s.traceId, spanId: s.parentSpanId, traceFlags: 1 } }),
    startTime: hrTime(s.startNs),
    endTime: hrTime(s.endNs),
    duration: hrTime(s.endNs - s.startNs),
    ended: true,
    status: s.status,
    attributes: attrs(s.attributes),
    links: s.links.map((l) => ({ context: { traceId: l.traceId, spanId: l.spanId, traceFlags: 1 }, attributes: attrs(l.attributes) })),
    events: s.events.map((e) => ({ name: e.name, attributes: attrs(e.attributes), time: hrTime(e.timeNs) })),
    resource,
    instrumentationScope: { name: scope.name, version: scope.version },
    droppedAttributesCount: 0,
    droppedEventsCount: 0,
    droppedLinksCount: 0,
  } as ReadableSpan;
}

/**
 * The SDK's `ReadableSpan`s of some traces (what {@link exportOtlpTraces} posts; tests serialise them with the SDK's
 * own `JsonTraceSerializer` to compare with `export otel`'s bytes).
 * @param traces the traces
 * @returns the spans, in order
 */
export async function readableSpans(traces: readonly OtelTrace[]): Promise<ReadableSpan[]> {
  const { resourceFromAttributes } = await import("@opentelemetry/resources");
  return traces.flatMap((t) => {
    const resource = resourceFromAttributes(attrs(t.resource));
    return t.spans.map((s) => readable(s, resource, t.scope));
  });
}

/**
 * Post traces to an OTLP/HTTP traces endpoint with the SDK's exporter, and shut it down.
 * @param url the endpoint (e.g. `http://localhost:4318/v1/traces`), used as given
 * @param traces the traces to send
 * @param options the timeout
 * @returns null when the endpoint accepted them, else why not (for a warning)
 * @example const why = await exportOtlpTraces("http://localhost:4318/v1/traces", [trace]);
 */
export async function exportOtlpTraces(url: string, traces: readonly OtelTrace[], options: OtlpExportOptions = {}): Promise<string | null> {
  try {
    const { OTLPTraceExporter } = await import("@opentelemetry/exporter-trace-otlp-http");
    const exporter = new OTLPTraceExporter({ url, timeoutMillis: options.timeoutMs ?? 5000 });
    const spans = await readableSpans(traces);
    const result = await new Promise<{ code: number; error?: Error }>((resolve) => exporter.export(spans, resolve));
    await exporter.shutdown().catch(() => undefined);
    return result.code === 0 ? null : (result.error?.message ?? "the endpoint did not accept the spans");
  } catch (err) {
    return err instanceof Error ? err.message : String(err);
  }
}
