/**
 * The validated-document cache: the result of validating a pack document (`reach.json`) or a plan with its zod
 * schema, kept between runs. Building and running those schemas was most of what zod cost a short CLI run (~10 ms of
 * start-up); a warm run of an unchanged pack now loads no schema at all.
 *
 * - **Key**: the document kind, {@link SCHEMA_REVISION} (a digest of the schema sources, checked by a test) and the
 *   SHA-256 of `JSON.stringify(document)` — key order included, since a record's output keeps its input's order.
 * - **Only pure JSON** is cached, in and out: plain objects and arrays, strings, booleans, null, finite numbers other
 *   than −0, no accessor. Anything else (a planner's odd object, −0, which JSON text cannot keep) is validated every
 *   time, so a hit returns exactly what validating would.
 * - **Only valid documents** are kept: a refused one is validated again, for its message.
 * - **The store** is the platform's (`EngineEnvironment.documents`; on Node and Deno the HMAC-authenticated disk store
 *   of `src/platform/document-store.ts`, trusted only after its checks). Without one, every document is validated.
 *   Any failure of the store is a miss.
 * @module
 */
import { sha256Hex } from "../canonical/mod.ts";
import { SCHEMA_REVISION } from "../protocol/mod.ts";

/** Where validated documents are kept: any failure is a miss. */
export type DocumentStore = {
  get(key: string): Promise<Uint8Array | null>;
  set(key: string, bytes: Uint8Array): Promise<void>;
};

const MAX_DEPTH = 200;

/** True when `value` is JSON data that survives `JSON.stringify` / `JSON.parse` unchanged (see the module notes). */
export function isPureJson(value: unknown, depth = 0): boolean {
  if (value === null || typeof value === "string" || typeof value === "boolean") return true;
  if (typeof value === "number") return Number.isFinite(value) && !Object.is(value, -0);
  if (typeof value !== "object" || depth > MAX_DEPTH) return false;
  if (Array.isArray(value)) {
    if (Object.getPrototypeOf(value) !== Array.prototype) return false;
    for (let i = 0; i < value.length; i++) {
      const d = Object.getOwnPropertyDescriptor(value, i);
      if (d === undefined || !("value" in d) || !isPureJson(d.value, depth + 1)) return false;
    }
    return Object.getOwnPropertySymbols(value).length === 0;
  }
  const proto = Object.getPrototypeOf(value);
  if (proto !== Object.prototype && proto !== null) return false;
  if (Object.getOwnPropertySymbols(value).length !== 0) return false;
  for (const key of Object.getOwnPropertyNames(value)) {
    const d = Object.getOwnPropertyDescriptor(value, key)!;
    if (!d.enumerable || !("value" in d) || !isPureJson(d.value, depth + 1)) return false;
  }
  return true;
}

/**
 * Validate `document` with `validate`, or return the result of validating the same document before.
 * @param kind what the document is (`pack`, `plan`): part of the key
 * @param document the untrusted document
 * @param validate the validation (zod; throws a `ReachError` when the document is invalid)
 * @param store where validated documents are kept (none: validate every time)
 * @returns what `validate` returns (or returned) for this document
 * @throws whatever `validate` throws
 * @example const pack = await validatedDocument("pack", document, () => parseOrThrow(PackSchema(), document, "PACK_INVALID_MANIFEST", "reach.json"));
 */
export async function validatedDocument<T>(kind: string, document: unknown, validate: () => T, store?: DocumentStore | null): Promise<T> {
  const s = store ?? null;
  if (s === null || !isPureJson(document)) return validate();
  const key = `${kind}-${SCHEMA_REVISION}-${sha256Hex(new TextEncoder().encode(JSON.stringify(document)))}`;
  const hit = await s.get(key).catch(() => null);
  if (hit !== null) {
    try {
      return JSON.parse(new TextDecoder("utf-8", { fatal: true }).decode(hit)) as T;
    } catch {
      // unreadable: validate again and overwrite it
    }
  }
  const value = validate();
  if (isPureJson(value)) await s.set(key, new TextEncoder().encode(JSON.stringify(value))).catch(() => {});
  return value;
}
