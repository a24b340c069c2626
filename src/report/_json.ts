/**
 * Small readers for untrusted JSON (a capsule is hostile input): typed accessors that return `null` instead of
 * throwing, own-property lookups only, and bounded previews. Internal to `src/report/`.
 * @module
 */

/** A JSON object as parsed from untrusted input. */
export type Obj = Record<string, unknown>;

const decoder = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });
const lenient = new TextDecoder("utf-8");

/**
 * `v` when it is a plain JSON object, else null.
 * @param v any value
 * @returns the object or null
 * @example obj([1]) // null
 */
export function obj(v: unknown): Obj | null {
  return typeof v === "object" && v !== null && !Array.isArray(v) ? (v as Obj) : null;
}

/**
 * An own property of `o` (never one from the prototype chain).
 * @param o an object or null
 * @param key the property
 * @returns the value, or undefined
 * @example get({}, "__proto__") // undefined
 */
export function get(o: Obj | null, key: string): unknown {
  return o !== null && Object.hasOwn(o, key) ? o[key] : undefined;
}

/**
 * An own string property, or null.
 * @param o an object or null
 * @param key the property
 * @returns the string or null
 * @example str({ a: 1 }, "a") // null
 */
export function str(o: Obj | null, key: string): string | null {
  const v = get(o, key);
  return typeof v === "string" ? v : null;
}

/**
 * An own finite number property, or null.
 * @param o an object or null
 * @param key the property
 * @returns the number or null
 * @example num({ a: 2 }, "a") // 2
 */
export function num(o: Obj | null, key: string): number | null {
  const v = get(o, key);
  return typeof v === "number" && Number.isFinite(v) ? v : null;
}

/**
 * An own array property of strings (other items dropped), or an empty array.
 * @param o an object or null
 * @param key the property
 * @returns the strings
 * @example strings({ a: ["x", 1] }, "a") // ["x"]
 */
export function strings(o: Obj | null, key: string): string[] {
  const v = get(o, key);
  return Array.isArray(v) ? v.filter((x): x is string => typeof x === "string") : [];
}

/**
 * An own array property (as is), or an empty array.
 * @param o an object or null
 * @param key the property
 * @returns the array
 * @example arr({ a: 1 }, "a") // []
 */
export function arr(o: Obj | null, key: string): unknown[] {
  const v = get(o, key);
  return Array.isArray(v) ? v : [];
}

/**
 * A fuel count (number or decimal string) as a decimal string, or null.
 * @param v the recorded fuel
 * @returns decimal digits or null
 * @example fuelText("0042") // "42"
 */
export function fuelText(v: unknown): string | null {
  if (typeof v === "number" && Number.isSafeInteger(v) && v >= 0) return String(v);
  if (typeof v === "string" && /^\d{1,30}$/.test(v)) return v.replace(/^0+(?=\d)/, "");
  return null;
}

/**
 * Parse UTF-8 JSON bytes; null when absent or not UTF-8 JSON.
 * @param bytes the bytes, or undefined
 * @returns the value or null
 * @example parseJsonBytes(new TextEncoder().encode("{}")) // {}
 */
export function parseJsonBytes(bytes: Uint8Array | undefined): unknown {
  if (bytes === undefined) return null;
  try {
    return JSON.parse(decoder.decode(bytes)) as unknown;
  } catch {
    return null;
  }
}

/**
 * Whether bytes are UTF-8 text without control characters other than tab, newline and carriage return.
 * @param bytes the bytes
 * @returns true for plain text
 * @example isText(new Uint8Array([0])) // false
 */
export function isText(bytes: Uint8Array): boolean {
  let text: string;
  try {
    text = decoder.decode(bytes);
  } catch {
    return false;
  }
  // eslint-disable-next-line no-control-regex
  return !/[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f]/.test(text);
}

/**
 * Bytes as text (invalid UTF-8 replaced).
 * @param bytes the bytes
 * @returns the text
 * @example textOf(new Uint8Array([104, 105])) // "hi"
 */
export function textOf(bytes: Uint8Array): string {
  return lenient.decode(bytes);
}

/**
 * Pretty JSON of any value (undefined → "null"; values JSON cannot hold are shown by their type).
 * @param value the value
 * @param indent spaces per level
 * @returns the JSON text
 * @example pretty({ a: 1 }) // "{\n  \"a\": 1\n}"
 */
export function pretty(value: unknown, indent = 2): string {
  try {
    return JSON.stringify(value, null, indent) ?? "null";
  } catch {
    return `(${typeof value})`;
  }
}

/**
 * Compact JSON of any value.
 * @param value the value
 * @returns the JSON text
 * @example compact({ a: 1 }) // "{\"a\":1}"
 */
export function compact(value: unknown): string {
  return pretty(value, 0);
}

/**
 * A preview of `text`: at most `max` characters, with how much was left out.
 * @param text the text
 * @param max the most characters kept
 * @returns the kept text and the count left out
 * @example clip("abcdef", 4) // { text: "abcd", omitted: 2 }
 */
export function clip(text: string, max: number): { text: string; omitted: number } {
  if (text.length <= max) return { text, omitted: 0 };
  return { text: text.slice(0, max), omitted: text.length - max };
}

/**
 * Byte count in human units (B, KiB, MiB, GiB).
 * @param n bytes
 * @returns the text
 * @example bytesText(2048) // "2.0 KiB"
 */
export function bytesText(n: number): string {
  if (n < 1024) return `${n} B`;
  const units = ["KiB", "MiB", "GiB"];
  let v = n / 1024;
  let i = 0;
  while (v >= 1024 && i < units.length - 1) {
    v /= 1024;
    i++;
  }
  return `${v.toFixed(v < 10 ? 1 : 0)} ${units[i]}`;
}

/**
 * A decimal count with thousands separators.
 * @param decimal decimal digits
 * @returns the grouped digits
 * @example groupDigits("1234567") // "1,234,567"
 */
export function groupDigits(decimal: string): string {
  return decimal.replace(/\B(?=(\d{3})+(?!\d))/g, ",");
}

/**
 * Milliseconds as text (`840 ms`, `3.2 s`, `2 min 5 s`).
 * @param ms milliseconds
 * @returns the text
 * @example msText(3200) // "3.2 s"
 */
export function msText(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)} s`;
  const s = Math.round(ms / 1000);
  return `${Math.floor(s / 60)} min ${s % 60} s`;
}

/**
 * `n thing` or `n things`.
 * @param n the count
 * @param thing the singular noun
 * @returns the phrase
 * @example plural(2, "step") // "2 steps"
 */
export function plural(n: number, thing: string): string {
  return `${n} ${thing}${n === 1 ? "" : "s"}`;
}
