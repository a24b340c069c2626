/**
 * JSON from outside, taken in one way (conformance/HASHING.md "What a tool sees"). Two doors:
 *
 * - {@link parseJsonText}: JSON text (a CLI `--input`, a service submission, a pack's `reach.json` and `plan.json`)
 *   parsed strictly. RFC 8259 syntax, and refused where JSON text is ambiguous or where a reader would see something
 *   else than the run uses: a name twice in one object (RFC 8259 §4 leaves the meaning open; parsers disagree), a
 *   lone UTF-16 surrogate written as `\uD800` (not Unicode, RFC 8785 §3.2.2.2), a number outside the range of a
 *   double (RFC 7493 §2.2), nesting deeper than {@link MAX_JSON_DEPTH}. Members are created as own data properties,
 *   so a `"__proto__"` name is a key like any other and never a prototype.
 * - {@link acceptJsonValue}: a value handed to the engine (the library's run input, an MCP call's arguments) checked
 *   the same way (JSON data, well-formed strings, the depth) and returned as the parse of its RFC 8785 canonical text:
 *   members in canonical order, numbers as `Number::toString` spells them, `-0` as `0`. What the engine keeps and
 *   hands on is then a function of the canonical value alone, live and on replay.
 *
 * Numbers are IEEE 754 doubles, as everywhere in the protocol: `1.0` is `1`, `1e21` is `1e+21`, a long integer is
 * rounded (send it as a string to keep every digit).
 * @module
 */
import { canonicalize } from "../canonical/mod.ts";
import { ReachError } from "./errors.ts";
import type { ErrorCode } from "./errors.ts";

/**
 * Deepest nesting of arrays and objects accepted from outside (the top-level container is depth 1). Far below the
 * 1000 levels canonical JSON allows, so that a value wrapped into events, requests and arguments stays hashable, and
 * every walk over it (ours, the schema checker's, a tool's JSON parser) stays shallow on any runtime's stack.
 */
export const MAX_JSON_DEPTH = 256;

/** Where JSON comes in: named in messages, and the code a refusal carries. */
export type JsonDoor = {
  /** What the JSON is, for messages: `"run: the input given inline"`, `"plan.json"`. */
  what: string;
  /** The code of a refusal. */
  code: ErrorCode;
  /** Deepest nesting accepted (default {@link MAX_JSON_DEPTH}). */
  maxDepth?: number;
};

/** Why JSON was refused (`details.reason` of the ReachError). */
export type JsonRefusalReason = "syntax" | "duplicate-key" | "depth" | "lone-surrogate" | "number-range" | "not-json";

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

class Refusal {
  constructor(
    readonly reason: JsonRefusalReason,
    readonly what: string,
    readonly fix: string,
    readonly at: number,
  ) {}
}

const IDENTIFIER = /^[A-Za-z_$][A-Za-z0-9_$]*$/;
/** A run of string characters that need no care: not `"`, `\` or U+0000–U+001F. */
const PLAIN_RUN = /[\u0020\u0021\u0023-\u005b\u005d-\uffff]*/y;
const NUMBER = /-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?/y;

const isWellFormed: (s: string) => boolean = (() => {
  const native = (String.prototype as { isWellFormed?: (this: string) => boolean }).isWellFormed;
  if (typeof native === "function") return (s: string) => native.call(s);
  const lone = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
  return (s: string) => !lone.test(s);
})();

/** Set a member as an own data property (CreateDataProperty): `"__proto__"` is a key, never the prototype. */
function define(obj: Record<string, Json>, key: string, value: Json): void {
  if (key === "__proto__") Object.defineProperty(obj, key, { value, writable: true, enumerable: true, configurable: true });
  else obj[key] = value;
}

/** A recursive-descent parser; recursion is bounded by `maxDepth`. */
class Parser {
  i = 0;
  readonly path: (string | number)[] = [];
  constructor(
    readonly s: string,
    readonly maxDepth: number,
  ) {}

  fail(reason: JsonRefusalReason, what: string, fix: string, at = this.i): never {
    throw new Refusal(reason, what, fix, at);
  }

  ws(): void {
    const s = this.s;
    let c = s.charCodeAt(this.i);
    while (c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09) c = s.charCodeAt(++this.i);
  }

  unexpected(): never {
    if (this.i >= this.s.length) this.fail("syntax", "the text ends early", "complete the JSON value");
    const c = this.s.codePointAt(this.i)!;
    const shown = c >= 0x20 && c < 0x7f ? `"${String.fromCharCode(c)}"` : `U+${c.toString(16).toUpperCase().padStart(4, "0")}`;
    return this.fail("syntax", `unexpected ${shown}`, "fix the JSON syntax");
  }

  value(depth: number): Json {
    this.ws();
    const c = this.s.charCodeAt(this.i);
    if (c === 0x7b) return this.object(depth + 1);
    if (c === 0x5b) return this.array(depth + 1);
    if (c === 0x22) return this.string();
    if (c === 0x2d || (c >= 0x30 && c <= 0x39)) return this.number();
    for (const [word, v] of LITERALS) if (this.s.startsWith(word, this.i)) {
      this.i += word.length;
      return v;
    }
    return this.unexpected();
  }

  enter(depth: number): void {
    if (depth > this.maxDepth) {
      this.fail("depth", `nesting deeper than ${this.maxDepth} levels`, `flatten the value (at most ${this.maxDepth} levels of arrays and objects) or carry the deep part as a string`);
    }
    this.i++;
    this.ws();
  }

  object(depth: number): Json {
    this.enter(depth);
    const obj: Record<string, Json> = {};
    if (this.s.charCodeAt(this.i) === 0x7d) {
      this.i++;
      return obj;
    }
    for (;;) {
      if (this.s.charCodeAt(this.i) !== 0x22) this.unexpected();
      const at = this.i;
      const key = this.string();
      if (Object.prototype.hasOwnProperty.call(obj, key)) {
        this.path.push(key);
        this.fail("duplicate-key", `the name ${JSON.stringify(key)} twice in one object`, "keep one member of that name (JSON readers disagree on which one counts)", at);
      }
      this.ws();
      if (this.s.charCodeAt(this.i) !== 0x3a) this.unexpected();
      this.i++;
      this.path.push(key);
      define(obj, key, this.value(depth));
      this.path.pop();
      this.ws();
      const c = this.s.charCodeAt(this.i++);
      if (c === 0x7d) return obj;
      if (c !== 0x2c) {
        this.i--;
        this.unexpected();
      }
      this.ws();
    }
  }

  array(depth: number): Json {
    this.enter(depth);
    const arr: Json[] = [];
    if (this.s.charCodeAt(this.i) === 0x5d) {
      this.i++;
      return arr;
    }
    for (;;) {
      this.path.push(arr.length);
      arr.push(this.value(depth));
      this.path.pop();
      this.ws();
      const c = this.s.charCodeAt(this.i++);
      if (c === 0x5d) return arr;
      if (c !== 0x2c) {
        this.i--;
        this.unexpected();
      }
    }
  }

  string(): string {
    const s = this.s;
    const start = this.i;
    let escaped = false;
    let j = start + 1;
    for (;;) {
      if (j < s.length) {
        PLAIN_RUN.lastIndex = j;
        PLAIN_RUN.test(s);
        j = PLAIN_RUN.lastIndex;
      }
      if (j >= s.length) this.fail("syntax", "a string that is never closed", "close the string with a double quote", start);
      const c = s.charCodeAt(j);
      if (c === 0x22) break;
      if (c !== 0x5c) this.fail("syntax", "a control character inside a string", "escape it (for example \\n or \\u0000)", j);
      escaped = true;
      j += 2;
    }
    this.i = j + 1;
    if (!escaped) {
      const text = s.slice(start + 1, j);
      if (!isWellFormed(text)) this.fail("lone-surrogate", "a lone UTF-16 surrogate", LONE_FIX, start);
      return text;
    }
    let text: string;
    try {
      text = JSON.parse(s.slice(start, j + 1)) as string;
    } catch {
      return this.fail("syntax", "an invalid escape sequence in a string", 'use only \\" \\\\ \\/ \\b \\f \\n \\r \\t and \\uXXXX', start);
    }
    if (!isWellFormed(text)) this.fail("lone-surrogate", "a lone UTF-16 surrogate (a \\uD800-\\uDFFF escape without its pair)", LONE_FIX, start);
    return text;
  }

  number(): number {
    NUMBER.lastIndex = this.i;
    const m = NUMBER.exec(this.s);
    if (m === null) return this.unexpected();
    const n = Number(m[0]);
    if (!Number.isFinite(n)) {
      this.fail("number-range", `the number ${m[0].length > 40 ? m[0].slice(0, 40) + "…" : m[0]}, outside the range of a double`, "send it as a string (I-JSON, RFC 7493 §2.2)");
    }
    this.i += m[0].length;
    return n;
  }
}

const LITERALS: readonly [string, Json][] = [["true", true], ["false", false], ["null", null]];
const LONE_FIX = "it cannot be encoded as UTF-8 (RFC 8785 §3.2.2.2); repair the text or carry the data as base64";

function pathText(path: readonly (string | number)[]): string {
  const segs = path.map((p) => (typeof p === "number" ? `[${p}]` : IDENTIFIER.test(p) ? `.${p}` : `[${JSON.stringify(p)}]`));
  const shown = segs.length <= 24 ? segs.join("") : `${segs.slice(0, 12).join("")}…(${segs.length - 20} more)…${segs.slice(-8).join("")}`;
  return "$" + shown;
}

function lineColumn(s: string, at: number): { line: number; column: number } {
  let line = 1;
  let from = 0;
  for (let k = s.indexOf("\n"); k !== -1 && k < at; k = s.indexOf("\n", k + 1)) {
    line++;
    from = k + 1;
  }
  return { line, column: at - from + 1 };
}

/**
 * Parse JSON text strictly (see the module notes).
 * @param text the JSON text (already decoded from UTF-8)
 * @param door what the text is and the code of a refusal
 * @returns the value, with every member an own data property
 * @throws ReachError with `door.code`, a message naming the problem, where it is (`$.a[2]`, line and column) and how
 *   to fix it, and `details: {reason, path, line, column}`
 * @example parseJsonText('{"b":1,"a":2}', { what: "the input", code: "PROTO_INVALID_ARGUMENT" }) // { b: 1, a: 2 }
 */
export function parseJsonText(text: string, door: JsonDoor): unknown {
  const p = new Parser(text, door.maxDepth ?? MAX_JSON_DEPTH);
  try {
    const value = p.value(0);
    p.ws();
    if (p.i < text.length) p.fail("syntax", "more text after the JSON value", "send one JSON value");
    return value;
  } catch (err) {
    if (!(err instanceof Refusal)) throw err;
    const path = pathText(p.path);
    const { line, column } = lineColumn(text, err.at);
    const where = err.reason === "syntax" ? `at line ${line}, column ${column}` : `at ${path} (line ${line}, column ${column})`;
    const kind = err.reason === "syntax" ? "is not valid JSON" : "is refused";
    throw new ReachError(door.code, `${door.what} ${kind}: ${err.what} ${where}; ${err.fix}`, {
      details: { reason: err.reason, path, line, column, ...(err.reason === "depth" ? { maxDepth: p.maxDepth } : {}) },
    });
  }
}

/** The nesting depth of canonical JSON text (strings skipped). */
function canonicalDepth(text: string): number {
  let depth = 0;
  let max = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x22) {
      for (i++; i < text.length; i++) {
        const d = text.charCodeAt(i);
        if (d === 0x5c) i++;
        else if (d === 0x22) break;
      }
    } else if (c === 0x7b || c === 0x5b) {
      if (++depth > max) max = depth;
    } else if (c === 0x7d || c === 0x5d) depth--;
  }
  return max;
}

/**
 * Take a JSON value in (see the module notes): check it and return the parse of its canonical text, with that text.
 * @param value the value (from a caller, or parsed by someone else)
 * @param door what the value is and the code of a refusal
 * @returns `value`: the canonical copy (members in RFC 8785 order, each an own data property); `text`: its
 *   canonical JSON
 * @throws ReachError with `door.code` when the value is not JSON data (undefined, NaN, a Date, a lone surrogate, a
 *   cycle, …) or nests deeper than `door.maxDepth`; `details: {reason, path?}`
 * @example acceptJsonValue({ zeta: 1, alpha: -0 }, { what: "the run input", code: "PROTO_INVALID_ARGUMENT" }).text // '{"alpha":0,"zeta":1}'
 */
export function acceptJsonValue(value: unknown, door: JsonDoor): { value: Json; text: string } {
  const maxDepth = door.maxDepth ?? MAX_JSON_DEPTH;
  let text: string;
  try {
    text = canonicalize(value);
  } catch (err) {
    if (!(err instanceof TypeError || err instanceof RangeError)) throw err;
    const deep = err instanceof RangeError;
    const why = err.message.replace(/^canonicalize: /, "");
    throw new ReachError(door.code, deep ? `${door.what} is refused: it nests deeper than ${maxDepth} levels; flatten it or carry the deep part as a string` : `${door.what} is not JSON data: ${why}`, {
      details: deep ? { reason: "depth", maxDepth } : { reason: "not-json" },
    });
  }
  const depth = canonicalDepth(text);
  if (depth > maxDepth) {
    throw new ReachError(door.code, `${door.what} is refused: it nests ${depth} levels deep, deeper than ${maxDepth}; flatten it or carry the deep part as a string`, {
      details: { reason: "depth", depth, maxDepth },
    });
  }
  return { value: JSON.parse(text) as Json, text };
}

/**
 * The nesting depth of a JSON value (the top-level container is 1, a scalar 0), counted without recursion and
 * stopping once past `limit`.
 * @param value the value
 * @param limit stop counting past this depth
 * @returns the depth, or a number above `limit`
 * @example jsonDepth({ a: [1] }, 256) // 2
 */
export function jsonDepth(value: unknown, limit: number): number {
  let max = 0;
  const stack: [unknown, number][] = [[value, 1]];
  while (stack.length > 0) {
    const [v, d] = stack.pop()!;
    if (v === null || typeof v !== "object") continue;
    if (d > max) max = d;
    if (max > limit) return max;
    for (const child of Array.isArray(v) ? v : Object.values(v)) stack.push([child, d + 1]);
  }
  return max;
}
