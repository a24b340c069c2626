// A strict decoder of OTLP/JSON traces (ExportTraceServiceRequest), for the tests of `export otel` and
// `--otlp-endpoint`: the protobuf JSON mapping of opentelemetry-proto's trace.proto / common.proto / resource.proto with
// OTLP's own rules (https://opentelemetry.io/docs/specs/otlp/#json-protobuf-encoding): lowerCamelCase field names,
// trace and span ids as case-insensitive hex (not base64) of exactly 16 and 8 bytes, enums as integers, 64-bit
// integers as decimal strings (numbers accepted for intValue, as the mapping allows), no unknown field, every
// AnyValue exactly one of its kinds. Any violation throws, naming the path.

type J = Record<string, unknown>;

function fail(path: string, why: string): never {
  throw new Error(`OTLP/JSON ${path}: ${why}`);
}

function object(v: unknown, path: string, allowed: readonly string[]): J {
  if (typeof v !== "object" || v === null || Array.isArray(v)) fail(path, "must be an object");
  for (const k of Object.keys(v)) if (!allowed.includes(k)) fail(`${path}.${k}`, "is not a field of this message");
  return v as J;
}

function list(v: unknown, path: string): unknown[] {
  if (v === undefined) return [];
  if (!Array.isArray(v)) fail(path, "must be an array");
  return v;
}

const U64 = /^(0|[1-9][0-9]{0,19})$/;

function uint64(v: unknown, path: string): bigint {
  if (typeof v !== "string" || !U64.test(v) || BigInt(v) > 0xffffffffffffffffn) fail(path, `must be a fixed64 as a decimal string, got ${JSON.stringify(v)}`);
  return BigInt(v);
}

function uint32(v: unknown, path: string): number {
  if (v === undefined) return 0;
  if (typeof v !== "number" || !Number.isInteger(v) || v < 0 || v > 0xffffffff) fail(path, "must be a uint32 number");
  return v;
}

function hexId(v: unknown, path: string, bytes: number): string {
  if (typeof v !== "string" || !new RegExp(`^[0-9a-fA-F]{${bytes * 2}}$`).test(v)) fail(path, `must be ${bytes * 2} hex digits, got ${JSON.stringify(v)}`);
  if (/^0+$/.test(v)) fail(path, "must not be all zeros");
  return v.toLowerCase();
}

function anyValue(v: unknown, path: string): unknown {
  const o = object(v, path, ["stringValue", "boolValue", "intValue", "doubleValue", "arrayValue", "kvlistValue", "bytesValue"]);
  const kinds = Object.keys(o);
  if (kinds.length !== 1) fail(path, `must hold exactly one value kind, got ${kinds.join(", ") || "none"}`);
  const [kind] = kinds as [string];
  const x = o[kind];
  if (kind === "stringValue" && typeof x !== "string") fail(path, "stringValue must be a string");
  if (kind === "boolValue" && typeof x !== "boolean") fail(path, "boolValue must be a boolean");
  if (kind === "intValue" && !(typeof x === "string" ? /^-?(0|[1-9][0-9]*)$/.test(x) : Number.isSafeInteger(x))) fail(path, "intValue must be an int64 (decimal string or safe integer)");
  if (kind === "doubleValue" && typeof x !== "number") fail(path, "doubleValue must be a number");
  if (kind === "arrayValue") list(object(x, `${path}.arrayValue`, ["values"])["values"], `${path}.arrayValue.values`).forEach((e, i) => anyValue(e, `${path}.arrayValue.values[${i}]`));
  if (kind === "kvlistValue") attributes(object(x, `${path}.kvlistValue`, ["values"])["values"], `${path}.kvlistValue.values`);
  if (kind === "bytesValue" && (typeof x !== "string" || !/^[A-Za-z0-9+/]*={0,2}$/.test(x))) fail(path, "bytesValue must be base64");
  return x;
}

function attributes(v: unknown, path: string): Map<string, unknown> {
  const out = new Map<string, unknown>();
  list(v, path).forEach((a, i) => {
    const o = object(a, `${path}[${i}]`, ["key", "value"]);
    if (typeof o["key"] !== "string" || o["key"] === "") fail(`${path}[${i}].key`, "must be a non-empty string");
    if (out.has(o["key"])) fail(`${path}[${i}].key`, `duplicate key ${o["key"]}`);
    out.set(o["key"], anyValue(o["value"], `${path}[${i}].value`));
  });
  return out;
}

/** A decoded span. */
export type DecodedSpan = {
  traceId: string;
  spanId: string;
  parentSpanId: string | null;
  name: string;
  kind: number;
  start: bigint;
  end: bigint;
  attributes: Map<string, unknown>;
  events: { name: string; time: bigint; attributes: Map<string, unknown> }[];
  links: { traceId: string; spanId: string }[];
  status: { code: number; message: string | null };
};

function span(v: unknown, path: string): DecodedSpan {
  const o = object(v, path, ["traceId", "spanId", "traceState", "parentSpanId", "flags", "name", "kind", "startTimeUnixNano", "endTimeUnixNano", "attributes", "droppedAttributesCount", "events", "droppedEventsCount", "links", "droppedLinksCount", "status"]);
  const kind = uint32(o["kind"], `${path}.kind`);
  if (kind > 5) fail(`${path}.kind`, "must be a SpanKind 0..5");
  if (typeof o["name"] !== "string" || o["name"] === "") fail(`${path}.name`, "must be a non-empty string");
  const start = uint64(o["startTimeUnixNano"], `${path}.startTimeUnixNano`);
  const end = uint64(o["endTimeUnixNano"], `${path}.endTimeUnixNano`);
  if (end < start) fail(path, "ends before it starts");
  uint32(o["flags"], `${path}.flags`);
  for (const k of ["droppedAttributesCount", "droppedEventsCount", "droppedLinksCount"]) uint32(o[k], `${path}.${k}`);
  const st = object(o["status"] ?? {}, `${path}.status`, ["code", "message"]);
  const code = uint32(st["code"], `${path}.status.code`);
  if (code > 2) fail(`${path}.status.code`, "must be a StatusCode 0..2");
  if (st["message"] !== undefined && typeof st["message"] !== "string") fail(`${path}.status.message`, "must be a string");
  return {
    traceId: hexId(o["traceId"], `${path}.traceId`, 16),
    spanId: hexId(o["spanId"], `${path}.spanId`, 8),
    parentSpanId: o["parentSpanId"] === undefined || o["parentSpanId"] === "" ? null : hexId(o["parentSpanId"], `${path}.parentSpanId`, 8),
    name: o["name"],
    kind,
    start,
    end,
    attributes: attributes(o["attributes"], `${path}.attributes`),
    events: list(o["events"], `${path}.events`).map((e, i) => {
      const p = `${path}.events[${i}]`;
      const eo = object(e, p, ["timeUnixNano", "name", "attributes", "droppedAttributesCount"]);
      uint32(eo["droppedAttributesCount"], `${p}.droppedAttributesCount`);
      if (typeof eo["name"] !== "string") fail(`${p}.name`, "must be a string");
      return { name: eo["name"], time: uint64(eo["timeUnixNano"], `${p}.timeUnixNano`), attributes: attributes(eo["attributes"], `${p}.attributes`) };
    }),
    links: list(o["links"], `${path}.links`).map((l, i) => {
      const p = `${path}.links[${i}]`;
      const lo = object(l, p, ["traceId", "spanId", "traceState", "attributes", "droppedAttributesCount", "flags"]);
      attributes(lo["attributes"], `${p}.attributes`);
      uint32(lo["flags"], `${p}.flags`);
      return { traceId: hexId(lo["traceId"], `${p}.traceId`, 16), spanId: hexId(lo["spanId"], `${p}.spanId`, 8) };
    }),
    status: { code, message: typeof st["message"] === "string" ? st["message"] : null },
  };
}

/**
 * Decode an OTLP/JSON traces request strictly.
 * @param text the JSON text
 * @returns every span with its resource's and scope's attributes
 * @throws Error naming the first violation
 */
export function decodeOtlpTraces(text: string): { resource: Map<string, unknown>; scope: { name: string; version: string }; spans: DecodedSpan[] }[] {
  const root = object(JSON.parse(text), "$", ["resourceSpans"]);
  return list(root["resourceSpans"], "$.resourceSpans").flatMap((rs, i) => {
    const p = `$.resourceSpans[${i}]`;
    const o = object(rs, p, ["resource", "scopeSpans", "schemaUrl"]);
    const res = object(o["resource"] ?? {}, `${p}.resource`, ["attributes", "droppedAttributesCount", "entityRefs"]);
    const resource = attributes(res["attributes"], `${p}.resource.attributes`);
    return list(o["scopeSpans"], `${p}.scopeSpans`).map((ss, j) => {
      const q = `${p}.scopeSpans[${j}]`;
      const so = object(ss, q, ["scope", "spans", "schemaUrl"]);
      const scope = object(so["scope"] ?? {}, `${q}.scope`, ["name", "version", "attributes", "droppedAttributesCount"]);
      return { resource, scope: { name: String(scope["name"] ?? ""), version: String(scope["version"] ?? "") }, spans: list(so["spans"], `${q}.spans`).map((s, k) => span(s, `${q}.spans[${k}]`)) };
    });
  });
}
