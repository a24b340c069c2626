/**
 * Small assert helpers for host requests (CONVENTIONS "Validation": hot paths use small assert helpers, not zod).
 * The tool is hostile: every field is checked for type and size, and unknown keys are refused. Every failure is a
 * `PROTO_INVALID_ARGUMENT` naming the op and field and saying what was expected.
 * @module
 */
import { base64ToBytes } from "../../canonical/mod.ts";
import { ReachError } from "../../protocol/mod.ts";

/** A validated request: a plain object whose keys have been checked. */
export type Req = Record<string, unknown>;

const encoder = new TextEncoder();

/**
 * The error for a malformed request.
 * @param op the host op
 * @param field the field (or `"request"`)
 * @param expected what was expected, phrased as a fix
 * @returns the error
 */
export function invalid(op: string, field: string, expected: string): ReachError {
  return new ReachError("PROTO_INVALID_ARGUMENT", `${op}: "${field}" ${expected}`, { details: { op, field } });
}

function kind(v: unknown): string {
  return v === null ? "null" : Array.isArray(v) ? "array" : typeof v;
}

/**
 * Check that `request` is a plain JSON object with `required` keys and no keys outside `required` ∪ `optional`.
 * @param op the host op
 * @param request the request
 * @param required keys that must be present
 * @param optional keys that may be present
 * @returns the request, typed
 * @throws ReachError `PROTO_INVALID_ARGUMENT`
 */
export function shape(op: string, request: unknown, required: readonly string[], optional: readonly string[] = []): Req {
  if (typeof request !== "object" || request === null || Array.isArray(request)) {
    throw invalid(op, "request", `expected a JSON object, got ${kind(request)}`);
  }
  const proto: unknown = Object.getPrototypeOf(request);
  if (proto !== Object.prototype && proto !== null) throw invalid(op, "request", "expected a plain JSON object");
  const r = request as Req;
  for (const k of Object.keys(r)) {
    if (!required.includes(k) && !optional.includes(k)) {
      const allowed = [...required, ...optional].map((x) => `"${x}"`).join(", ") || "no fields";
      throw invalid(op, k.length > 64 ? k.slice(0, 64) + "…" : k, `is not a field of this request; allowed: ${allowed}`);
    }
  }
  for (const k of required) {
    if (!Object.prototype.hasOwnProperty.call(r, k)) throw invalid(op, k, "is required");
  }
  return r;
}

/**
 * A string field.
 * @param op the host op
 * @param r the request
 * @param field the field
 * @param maxLength most UTF-16 code units
 * @param minLength fewest (default 0)
 * @returns the string
 * @throws ReachError `PROTO_INVALID_ARGUMENT`
 */
export function str(op: string, r: Req, field: string, maxLength: number, minLength = 0): string {
  const v = r[field];
  if (typeof v !== "string") throw invalid(op, field, `expected a string, got ${kind(v)}`);
  if (v.length > maxLength || v.length < minLength) {
    throw invalid(op, field, `expected ${minLength}..${maxLength} characters, got ${v.length}`);
  }
  return v;
}

/**
 * An integer field.
 * @param op the host op
 * @param r the request
 * @param field the field
 * @param min smallest value
 * @param max largest value
 * @returns the integer
 * @throws ReachError `PROTO_INVALID_ARGUMENT`
 */
export function int(op: string, r: Req, field: string, min: number, max: number): number {
  const v = r[field];
  if (typeof v !== "number" || !Number.isInteger(v) || v < min || v > max) {
    throw invalid(op, field, `expected an integer ${min}..${max}, got ${typeof v === "number" ? String(v) : kind(v)}`);
  }
  return v;
}

/**
 * An optional boolean field.
 * @returns the boolean, or `fallback` when absent
 * @throws ReachError `PROTO_INVALID_ARGUMENT`
 */
export function optBool(op: string, r: Req, field: string, fallback: boolean): boolean {
  if (!Object.prototype.hasOwnProperty.call(r, field)) return fallback;
  const v = r[field];
  if (typeof v !== "boolean") throw invalid(op, field, `expected true or false, got ${kind(v)}`);
  return v;
}

/**
 * The body of a request: exactly one of `data` (standard base64) or `text` (UTF-8), or neither when `optional`.
 * @param op the host op
 * @param r the request
 * @param maxBytes most decoded bytes
 * @param optional whether the body may be absent
 * @returns the bytes, or null when absent
 * @throws ReachError `PROTO_INVALID_ARGUMENT`
 */
export function body(op: string, r: Req, maxBytes: number, optional = false): Uint8Array | null {
  const hasData = Object.prototype.hasOwnProperty.call(r, "data");
  const hasText = Object.prototype.hasOwnProperty.call(r, "text");
  if (hasData && hasText) throw invalid(op, "data", `and "text" are exclusive; send one of them`);
  if (!hasData && !hasText) {
    if (optional) return null;
    throw invalid(op, "data", `or "text" is required`);
  }
  if (hasData) {
    const v = r["data"];
    if (typeof v !== "string") throw invalid(op, "data", `expected a base64 string, got ${kind(v)}`);
    if (v.length > Math.ceil(maxBytes / 3) * 4) throw invalid(op, "data", `is over the limit of ${maxBytes} bytes`);
    try {
      return base64ToBytes(v);
    } catch {
      throw invalid(op, "data", "expected standard padded base64");
    }
  }
  const t = r["text"];
  if (typeof t !== "string") throw invalid(op, "text", `expected a string, got ${kind(t)}`);
  if (t.length > maxBytes) throw invalid(op, "text", `is over the limit of ${maxBytes} bytes`);
  if (/\p{Surrogate}/u.test(t)) throw invalid(op, "text", "is not well-formed Unicode (lone surrogate)");
  const bytes = encoder.encode(t);
  if (bytes.length > maxBytes) throw invalid(op, "text", `is over the limit of ${maxBytes} bytes`);
  return bytes;
}
