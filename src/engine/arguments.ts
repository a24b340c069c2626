/**
 * Step arguments may take values from the run's input: an argument value that is exactly `{"$input": "<JSON
 * pointer>"}` (RFC 6901; `""` is the whole input) is replaced by that part of the input before the envelope is
 * built. Nothing else is rewritten, so a static plan stays a plain JSON document and its hash covers the references.
 * @module
 */
import { ReachError } from "../protocol/errors.ts";
import type { JsonObject, JsonValue } from "../sandbox/types.ts";

function isRef(v: JsonValue): v is { $input: string } {
  return v !== null && typeof v === "object" && !Array.isArray(v) && Object.keys(v).length === 1 && Object.prototype.hasOwnProperty.call(v, "$input");
}

/**
 * Resolve an RFC 6901 JSON pointer.
 * @param doc the document
 * @param pointer `""` or `/a/0/b`
 * @returns the value, or undefined when absent
 */
export function resolvePointer(doc: JsonValue, pointer: string): JsonValue | undefined {
  if (pointer === "") return doc;
  if (!pointer.startsWith("/")) return undefined;
  let at: JsonValue | undefined = doc;
  for (const raw of pointer.slice(1).split("/")) {
    const key = raw.replace(/~1/g, "/").replace(/~0/g, "~");
    if (at === null || typeof at !== "object") return undefined;
    if (Array.isArray(at)) {
      if (!/^(0|[1-9]\d*)$/.test(key)) return undefined;
      at = at[Number(key)];
    } else {
      at = Object.prototype.hasOwnProperty.call(at, key) ? at[key] : undefined;
    }
    if (at === undefined) return undefined;
  }
  return at;
}

function resolve(value: JsonValue, input: JsonValue, where: string): JsonValue {
  if (isRef(value)) {
    const pointer = value.$input;
    if (typeof pointer !== "string") throw new ReachError("PLAN_INVALID", `${where}: "$input" must be a JSON pointer string such as "/text"`);
    const found = resolvePointer(input, pointer);
    if (found === undefined) {
      throw new ReachError("PROTO_SCHEMA_VIOLATION", `${where}: the run input has nothing at ${JSON.stringify(pointer)}; pass it with --input`, {
        details: { pointer },
      });
    }
    return found;
  }
  if (Array.isArray(value)) return value.map((v, i) => resolve(v, input, `${where}[${i}]`));
  if (value !== null && typeof value === "object") {
    const out: JsonObject = {};
    for (const [k, v] of Object.entries(value)) out[k] = resolve(v, input, `${where}.${k}`);
    return out;
  }
  return value;
}

/**
 * Replace `{"$input": pointer}` values by the input's values.
 * @param args the step's arguments
 * @param input the run input
 * @param stepId for messages
 * @returns new arguments
 * @throws ReachError `PROTO_SCHEMA_VIOLATION` when the input lacks a referenced value
 */
export function resolveArguments(args: JsonObject, input: JsonValue, stepId: string): JsonObject {
  return resolve(args, input, `step "${stepId}" arguments`) as JsonObject;
}
