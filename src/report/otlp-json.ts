/**
 * OTLP/JSON: traces as the OpenTelemetry protocol's JSON encoding (`ExportTraceServiceRequest`, the body of
 * `POST /v1/traces` with `Content-Type: application/json`): the protobuf JSON mapping with OTLP's exceptions — trace
 * and span ids as lowercase hex, not base64; enums as integers; 64-bit times as decimal strings; camelCase names.
 * Fields are written in the order the official OpenTelemetry JavaScript serializer writes them
 * (`@opentelemetry/otlp-transformer`'s `JsonTraceSerializer`), so the bytes are the same as the SDK's for the same
 * spans (tests/otel-export.test.ts checks it).
 * @module
 */
import type { OtelTrace, OtelValue } from "../protocol/mod.ts";

/** W3C trace flags `sampled` (1) with OTLP's "has is_remote" bit (0x100), as the SDK writes for a local span. */
const FLAGS = 257;

function anyValue(v: OtelValue): Record<string, unknown> {
  if (typeof v === "string") return { stringValue: v };
  if (typeof v === "boolean") return { boolValue: v };
  return Number.isSafeInteger(v) ? { intValue: v } : { doubleValue: v };
}

const attributes = (list: readonly [string, OtelValue][]): unknown[] => list.map(([key, value]) => ({ key, value: anyValue(value) }));

function spanJson(s: OtelTrace["spans"][number]): Record<string, unknown> {
  return {
    traceId: s.traceId,
    spanId: s.spanId,
    ...(s.parentSpanId === null ? {} : { parentSpanId: s.parentSpanId }),
    name: s.name,
    kind: s.kind,
    startTimeUnixNano: s.startNs.toString(),
    endTimeUnixNano: s.endNs.toString(),
    attributes: attributes(s.attributes),
    droppedAttributesCount: 0,
    events: s.events.map((e) => ({ attributes: attributes(e.attributes), name: e.name, timeUnixNano: e.timeNs.toString(), droppedAttributesCount: 0 })),
    droppedEventsCount: 0,
    status: s.status.message === undefined ? { code: s.status.code } : { code: s.status.code, message: s.status.message },
    links: s.links.map((l) => ({ attributes: attributes(l.attributes), spanId: l.spanId, traceId: l.traceId, droppedAttributesCount: 0, flags: FLAGS })),
    droppedLinksCount: 0,
    flags: FLAGS,
  };
}

/**
 * The OTLP/JSON document of some traces (one `resourceSpans` entry per trace).
 * @param traces the traces (from `otelTrace`)
 * @returns the JSON text (no trailing newline), the same bytes for the same traces
 * @example encodeOtlpJson([otelTrace(entries, { scope: { name: "reach-wasm", version } })])
 */
export function encodeOtlpJson(traces: readonly OtelTrace[]): string {
  return JSON.stringify({
    resourceSpans: traces.map((t) => ({
      resource: { attributes: attributes(t.resource), droppedAttributesCount: 0 },
      scopeSpans: [{ scope: { name: t.scope.name, version: t.scope.version }, spans: t.spans.map(spanJson) }],
    })),
  });
}
