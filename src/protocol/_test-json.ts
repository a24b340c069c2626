/**
 * Test helpers (not part of the build): a seeded generator of JSON values made of the parts that break naive
 * record-and-replay — key order, number spellings, `__proto__` and other prototype names, integer-like names,
 * non-BMP and unnormalised Unicode names, escapes, nesting — and a speller that writes one value as many different
 * JSON texts. Deterministic: the same seed gives the same values and texts on every run and runtime.
 * @module
 */

/** A seeded PRNG (mulberry32): `next()` in [0, 1). */
export type Rng = { next(): number; int(n: number): number; pick<T>(xs: readonly T[]): T; chance(p: number): boolean };

/**
 * A seeded random stream.
 * @param seed any 32-bit integer
 * @returns the stream
 */
export function rng(seed: number): Rng {
  let a = seed >>> 0;
  const next = (): number => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  return {
    next,
    int: (n) => Math.floor(next() * n),
    pick: (xs) => xs[Math.floor(next() * xs.length)]!,
    chance: (p) => next() < p,
  };
}

/**
 * A shuffled copy (Fisher–Yates, so the order depends on the stream only, not on a sort algorithm).
 * @param xs the items
 * @param r the stream
 * @returns a new array
 */
export function shuffled<T>(xs: readonly T[], r: Rng): T[] {
  const out = [...xs];
  for (let i = out.length - 1; i > 0; i--) {
    const j = r.int(i + 1);
    [out[i], out[j]] = [out[j]!, out[i]!];
  }
  return out;
}

/** Names that a careless copy or a naive sort gets wrong. */
export const KEYS: readonly string[] = [
  "a", "b", "zeta", "alpha", "Alpha", "__proto__", "constructor", "toString", "hasOwnProperty", "10", "2", "0", "-1", "01",
  "1.5", "\u00e9", "e\u0301", "\u00c5", "\u212b", "\ufb00", "\u{1F600}", "\u{1D4B3}", "\uffff", "\ue000", "", " ", "a b",
  "\u2028", "\u0000", "\u001f", "\"q\"", "back\\slash", "/", "~1",
];

const STRINGS: readonly string[] = ["", "x", "\u{1F600}", "e\u0301", "\u00e9", "line\nbreak", "tab\t", "\u0000", "\u007f\u009b", "\u202e", "\"", "\\", "/", "\u{10FFFF}", "\ud83d\ude00\ud83d\ude00"];

const NUMBERS: readonly number[] = [
  0, -0, 1, -1, 2, 10, 1.5, 0.1, 0.2 + 0.1, 1e21, 1e-7, 1e20, 123456789012, 2 ** 53, 2 ** 53 + 2, -(2 ** 31), 5e-324, 1.7976931348623157e308,
  Number.MIN_VALUE * 3, Number("9007199254740993"), 1e300, 4.35, 0.000001,
];

/** A JSON value (the generator's output type). */
export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

/** An object with the given members, each an own data property (so `"__proto__"` is a member). */
function objectOf(entries: [string, Json][]): { [key: string]: Json } {
  return Object.fromEntries(entries) as { [key: string]: Json };
}

/**
 * A random JSON value.
 * @param r the stream
 * @param depth how many more levels of nesting it may have
 * @returns the value
 */
export function genValue(r: Rng, depth: number): Json {
  const k = r.int(depth > 0 ? 8 : 5);
  if (k === 0) return r.pick([null, true, false]);
  if (k === 1 || k === 2) return r.pick(NUMBERS);
  if (k === 3) return r.chance(0.5) ? r.pick(STRINGS) : r.pick(KEYS);
  if (k === 4) return r.int(1000) - 500;
  if (k === 5) return Array.from({ length: r.int(4) }, () => genValue(r, depth - 1));
  return genObject(r, depth - 1);
}

/**
 * A random JSON object (names from {@link KEYS}, each at most once).
 * @param r the stream
 * @param depth nesting left for its members
 * @param size most members (default 6)
 * @returns the object
 */
export function genObject(r: Rng, depth: number, size = 6): { [key: string]: Json } {
  const names = shuffled(KEYS, r).slice(0, 1 + r.int(size));
  return objectOf(names.map((n) => [n, genValue(r, depth)]));
}

/** Spellings of a number that parse to the same double (and, for zero, to 0 or -0: the same canonical value). */
function spellNumber(n: number, r: Rng): string {
  if (n === 0) return r.pick(["0", "-0", "0.0", "-0.0", "0e0", "0E+3", "-0e-5"]);
  const shortest = String(n);
  const m = /^(-?)(\d+)(?:\.(\d+))?(?:e([+-]\d+))?$/.exec(shortest)!;
  const sign = m[1]!;
  const digits = (m[2]! + (m[3] ?? "")).replace(/^0+(?=\d)/, "");
  const exp = Number(m[4] ?? "0") - (m[3] ?? "").length; // value = sign digits × 10^exp
  switch (r.int(5)) {
    case 0:
      return shortest;
    case 1: {
      const z = 1 + r.int(3); // more zeros, a smaller exponent: the same decimal value
      return `${sign}${digits}${"0".repeat(z)}${r.pick(["e", "E"])}${exp - z}`;
    }
    case 2:
      return `${sign}${digits}${r.pick(["e", "E"])}${exp >= 0 ? r.pick(["+", ""]) : ""}${exp}`;
    case 3: {
      const text = `${digits.slice(0, 1)}.${digits.slice(1) || "0"}`;
      return `${sign}${text}e${exp + digits.length - 1}`;
    }
    default:
      return Number.isInteger(n) && Math.abs(n) < 1e15 ? `${shortest}.0` : shortest;
  }
}

/** A string as JSON text, with some characters written as `\u` escapes (both halves of a pair) or `\/`. */
function spellString(s: string, r: Rng): string {
  let out = '"';
  for (const ch of s) {
    const c = ch.codePointAt(0)!;
    if (ch === '"' || ch === "\\") out += "\\" + ch;
    else if (c < 0x20 || r.chance(0.2)) out += Array.from({ length: ch.length }, (_, i) => "\\u" + ch.charCodeAt(i).toString(16).padStart(4, "0")).join("");
    else if (ch === "/" && r.chance(0.5)) out += "\\/";
    else out += ch;
  }
  return out + '"';
}

const WS = ["", "", "", " ", "\n", "\t", " \r\n "];

/**
 * One JSON text of `value`: members in a random order, random whitespace, numbers and strings spelled in random
 * equivalent ways. Every text of a value parses to values with the same canonical (RFC 8785) form.
 * @param value the value
 * @param r the stream
 * @returns JSON text
 */
export function spell(value: Json, r: Rng): string {
  const ws = (): string => r.pick(WS);
  if (value === null || typeof value === "boolean") return String(value);
  if (typeof value === "number") return spellNumber(value, r);
  if (typeof value === "string") return spellString(value, r);
  if (Array.isArray(value)) return `[${ws()}${value.map((v) => spell(v, r)).join(`${ws()},${ws()}`)}${ws()}]`;
  const keys = shuffled(Object.keys(value), r);
  return `{${ws()}${keys.map((k) => `${spellString(k, r)}${ws()}:${ws()}${spell(value[k]!, r)}`).join(`${ws()},${ws()}`)}${ws()}}`;
}
