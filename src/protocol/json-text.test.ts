// JSON from outside, taken in one way: the strict parser refuses what JSON text leaves ambiguous (a name twice, a lone
// surrogate, a number out of range, nesting past the limit) with the door's code and a message saying where and how
// to fix it, keeps "__proto__" as a member, and otherwise reads exactly what JSON.parse reads; acceptJsonValue hands
// on the canonical copy, the same for every spelling of a value.
import { describe, expect, it } from "vitest";
import { canonicalize } from "../canonical/jcs.ts";
import { ReachError } from "./errors.ts";
import { acceptJsonValue, jsonDepth, MAX_JSON_DEPTH, parseJsonText } from "./json-text.ts";
import { genValue, rng, spell } from "./_test-json.ts";

const door = { what: "the input", code: "PROTO_INVALID_ARGUMENT" as const };

function refusal(fn: () => unknown): ReachError {
  try {
    fn();
  } catch (err) {
    if (err instanceof ReachError) return err;
    throw err;
  }
  throw new Error("expected a refusal");
}

const nested = (depth: number, open = "[", close = "]"): string => open.repeat(depth) + close.repeat(depth);

describe("parseJsonText", () => {
  it("reads every spelling of generated values exactly as JSON.parse does (seeded, 400 values)", () => {
    const r = rng(8785);
    for (let i = 0; i < 400; i++) {
      const text = spell(genValue(r, 4), r);
      const native = JSON.parse(text) as unknown;
      const strict = parseJsonText(text, door);
      expect(canonicalize(strict), text).toBe(canonicalize(native));
      expect(JSON.stringify(strict), text).toBe(JSON.stringify(native)); // member order too
    }
  });

  it('keeps "__proto__" as an own member at every depth, never as the prototype', () => {
    const v = parseJsonText('{"__proto__":{"polluted":1},"a":[{"__proto__":null}]}', door) as Record<string, unknown>;
    expect(Object.getPrototypeOf(v)).toBe(Object.prototype);
    expect(Object.keys(v)).toEqual(["__proto__", "a"]);
    expect(Object.getOwnPropertyDescriptor(v, "__proto__")?.value).toEqual({ polluted: 1 });
    expect((v as { polluted?: unknown }).polluted).toBeUndefined();
    expect(canonicalize(v)).toBe('{"__proto__":{"polluted":1},"a":[{"__proto__":null}]}');
  });

  it("refuses a name twice in one object, however it is escaped, naming the path, line and column", () => {
    const e = refusal(() => parseJsonText('{"a":1,\n "b":{"x":1,"\\u0078":2}}', door));
    expect(e.code).toBe("PROTO_INVALID_ARGUMENT");
    expect(e.details).toMatchObject({ reason: "duplicate-key", path: "$.b.x", line: 2, column: 13 });
    expect(e.message).toMatch(/the input is refused: the name "x" twice in one object at \$\.b\.x \(line 2, column 13\); keep one member/);
    expect(refusal(() => parseJsonText('{"__proto__":1,"__proto__":2}', door)).details).toMatchObject({ reason: "duplicate-key" });
    expect(parseJsonText('[{"a":1},{"a":2}]', door)).toEqual([{ a: 1 }, { a: 2 }]); // the same name in two objects is fine
  });

  it(`refuses nesting past ${MAX_JSON_DEPTH} levels (or the door's own limit) without deep recursion`, () => {
    expect(jsonDepth(parseJsonText(nested(MAX_JSON_DEPTH), door), 1000)).toBe(MAX_JSON_DEPTH);
    expect(refusal(() => parseJsonText(nested(MAX_JSON_DEPTH + 1), door)).details).toMatchObject({ reason: "depth", maxDepth: MAX_JSON_DEPTH });
    const huge = refusal(() => parseJsonText(nested(100_000, '{"k":[', "]}"), door));
    expect(huge.details).toMatchObject({ reason: "depth" });
    expect(huge.message).toMatch(/nesting deeper than 256 levels .*; flatten the value/);
    expect(refusal(() => parseJsonText(nested(4), { ...door, maxDepth: 3 })).details).toMatchObject({ reason: "depth", maxDepth: 3 });
  });

  it("refuses lone surrogates, numbers out of range and bad syntax with the door's code", () => {
    const cases: [string, string][] = [
      ['{"s":"\\ud800"}', "lone-surrogate"],
      ['{"\\udc00x":1}', "lone-surrogate"],
      ["[1e400]", "number-range"],
      ["[-1e309]", "number-range"],
      ["[1,]", "syntax"],
      ['{"a" 1}', "syntax"],
      ["01", "syntax"],
      ["[NaN]", "syntax"],
      ['"a\u0001"', "syntax"],
      ['"\\x"', "syntax"],
      ['"open', "syntax"],
      ["{} {}", "syntax"],
      ["", "syntax"],
    ];
    for (const [text, reason] of cases) {
      const e = refusal(() => parseJsonText(text, { what: "plan.json", code: "PLAN_INVALID" }));
      expect([e.code, e.details?.["reason"]], text).toEqual(["PLAN_INVALID", reason]);
      expect(e.message, text).toMatch(/^plan\.json (is refused|is not valid JSON): .*line \d+, column \d+/);
    }
    expect(parseJsonText('"\\ud83d\\ude00"', door)).toBe("\u{1F600}"); // a pair is fine
  });
});

describe("acceptJsonValue", () => {
  it("returns the canonical copy: every spelling of a value gives the same text and the same member order", () => {
    const r = rng(2026);
    for (let i = 0; i < 200; i++) {
      const v = genValue(r, 4);
      const a = acceptJsonValue(parseJsonText(spell(v, r), door), door);
      const b = acceptJsonValue(parseJsonText(spell(v, r), door), door);
      expect(a.text).toBe(canonicalize(v));
      expect(b.text).toBe(a.text);
      expect(JSON.stringify(b.value)).toBe(JSON.stringify(a.value));
    }
    expect(acceptJsonValue({ zeta: 1, alpha: -0, n: 1e21 }, door)).toEqual({ value: { alpha: 0, n: 1e21, zeta: 1 }, text: '{"alpha":0,"n":1e+21,"zeta":1}' });
    expect(Object.keys(acceptJsonValue(JSON.parse('{"b":1,"__proto__":2}'), door).value as object)).toEqual(["__proto__", "b"]);
  });

  it("refuses what is not JSON data, and nesting past the limit (100,000 levels: no stack overflow)", () => {
    let deep: unknown = 1;
    for (let i = 0; i < 100_000; i++) deep = [deep];
    const cases: [unknown, string][] = [[{ a: undefined }, "not-json"], [[Number.NaN], "not-json"], [{ s: "\ud800" }, "not-json"], [new Date(0), "not-json"], [JSON.parse(nested(MAX_JSON_DEPTH + 1)), "depth"], [deep, "depth"]];
    for (const [value, reason] of cases) {
      const e = refusal(() => acceptJsonValue(value, { what: "the arguments", code: "PROTO_INVALID_ARGUMENT" }));
      expect([e.code, e.details?.["reason"]]).toEqual(["PROTO_INVALID_ARGUMENT", reason]);
      expect(e.message).toMatch(/^the arguments (is not JSON data|is refused): /);
    }
  });
});
