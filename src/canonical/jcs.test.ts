import { readdirSync, readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { ES6_PREFIX_SHA256, es6NumberLines } from "../../conformance/lib/jcs-cases.ts";
import { bytesToHex } from "./hex.ts";
import { canonicalBytes, canonicalize, hashCanonical, MAX_DEPTH } from "./jcs.ts";
import { sha256Hex } from "./sha256.ts";

const VECTORS = new URL("../../conformance/vectors/jcs/", import.meta.url);
const read = (p: string): string => readFileSync(new URL(p, VECTORS), "utf8");

describe("RFC 8785 vectors (cyberphone/json-canonicalization)", () => {
  const files = readdirSync(new URL("input/", VECTORS)).filter((f) => f.endsWith(".json"));

  it("has the six upstream vector files", () => {
    expect(files.sort()).toEqual(["arrays.json", "french.json", "structures.json", "unicode.json", "values.json", "weird.json"]);
  });

  for (const file of files) {
    it(`canonicalises input/${file} to output/${file} byte for byte`, () => {
      const got = canonicalBytes(JSON.parse(read(`input/${file}`)));
      const want = new Uint8Array(readFileSync(new URL(`output/${file}`, VECTORS)));
      const wantHex = read(`outhex/${file.replace(/\.json$/, ".txt")}`).replace(/\s+/g, "");
      expect(bytesToHex(got)).toBe(bytesToHex(want));
      expect(bytesToHex(got)).toBe(wantHex);
    });
  }
});

describe("numbers (ECMAScript Number::toString)", () => {
  const doubleFromHex = (hex: string): number => {
    const v = new DataView(new ArrayBuffer(8));
    v.setBigUint64(0, BigInt("0x" + hex));
    return v.getFloat64(0);
  };

  it("matches every line of numbers.txt", () => {
    const lines = read("numbers.txt").trim().split("\n");
    expect(lines.length).toBeGreaterThan(170);
    for (const line of lines) {
      const [hex, want] = line.split(",") as [string, string];
      expect(canonicalize(doubleFromHex(hex)), hex).toBe(want);
    }
  });

  it("handles the classics", () => {
    expect(canonicalize(1e21)).toBe("1e+21");
    expect(canonicalize(1e20)).toBe("100000000000000000000");
    expect(canonicalize(1e-7)).toBe("1e-7");
    expect(canonicalize(0.000001)).toBe("0.000001");
    expect(canonicalize(0.1 + 0.2)).toBe("0.30000000000000004");
    expect(canonicalize(5e-324)).toBe("5e-324");
    expect(canonicalize(1.7976931348623157e308)).toBe("1.7976931348623157e+308");
    expect(canonicalize(123456789012345680000)).toBe("123456789012345680000");
    expect(canonicalize(-0)).toBe("0");
    expect(canonicalize([-0, { z: -0 }])).toBe('[0,{"z":0}]');
  });

  it("reproduces the published SHA-256 of the first 100,000 lines of the ES6 number file", () => {
    expect(sha256Hex(es6NumberLines(1000))).toBe(ES6_PREFIX_SHA256[1000]);
    expect(sha256Hex(es6NumberLines(100000))).toBe(ES6_PREFIX_SHA256[100000]);
  });
});

describe("structure", () => {
  it("sorts keys by UTF-16 code units, not code points or locale", () => {
    // U+1F600 is D83D DE00 in UTF-16, which sorts before U+FFFF although its code point is larger.
    expect(canonicalize({ "\uFFFF": 1, "\u{1F600}": 2 })).toBe('{"\u{1F600}":2,"\uFFFF":1}');
    expect(canonicalize({ "\uFB33": 1, "\u{1F602}": 2, "\u00f6": 3, "\u20ac": 4 })).toBe(
      '{"\u00f6":3,"\u20ac":4,"\u{1F602}":2,"\uFB33":1}',
    );
    expect(canonicalize({ b: 1, a: 2, B: 3, "": 4, aa: 5 })).toBe('{"":4,"B":3,"a":2,"aa":5,"b":1}');
    // integer-like keys are strings too: "10" < "2" < "a"
    expect(canonicalize({ a: 0, 2: 1, 10: 2 })).toBe('{"10":2,"2":1,"a":0}');
  });

  it("sorts large key sets the same way as small ones", () => {
    const keys = Array.from({ length: 200 }, (_, i) => String.fromCharCode(0x61 + (i % 26)) + String(i * 7919 % 1000));
    const obj = Object.fromEntries(keys.map((k, i) => [k, i]));
    const want = "{" + [...new Set(keys)].sort().map((k) => `${JSON.stringify(k)}:${obj[k]}`).join(",") + "}";
    expect(canonicalize(obj)).toBe(want);
  });

  it("serialises nested structures without whitespace", () => {
    const v = { z: [1, [2, [3, { y: null, x: true }]], {}], a: { c: { e: false, d: "s" }, b: [] } };
    expect(canonicalize(v)).toBe('{"a":{"b":[],"c":{"d":"s","e":false}},"z":[1,[2,[3,{"x":true,"y":null}]],{}]}');
  });

  it("escapes strings as RFC 8785 §3.2.2.2 requires", () => {
    expect(canonicalize("\u0000\b\t\n\f\r\u001f\"\\/\u007f\u2028é😀")).toBe(
      '"\\u0000\\b\\t\\n\\f\\r\\u001f\\"\\\\/\u007f\u2028é😀"',
    );
    expect(canonicalize({ "a\nb": "x" })).toBe('{"a\\nb":"x"}');
  });

  it("accepts top-level primitives and null-prototype objects", () => {
    expect(canonicalize(null)).toBe("null");
    expect(canonicalize(true)).toBe("true");
    expect(canonicalize("x")).toBe('"x"');
    expect(canonicalize(Object.assign(Object.create(null) as object, { b: 1, a: 2 }))).toBe('{"a":2,"b":1}');
  });

  it("allows shared (non-cyclic) references", () => {
    const shared = { k: 1 };
    expect(canonicalize({ a: shared, b: [shared, shared] })).toBe('{"a":{"k":1},"b":[{"k":1},{"k":1}]}');
  });

  it("accepts exactly MAX_DEPTH levels of nesting", () => {
    let v: unknown = 0;
    for (let i = 0; i < MAX_DEPTH; i++) v = { n: v };
    expect(canonicalize(v).length).toBe(MAX_DEPTH * 6 + 1);
    expect(() => canonicalize([v])).toThrow(RangeError);
  });

  it("hashes the canonical UTF-8 bytes", () => {
    expect(hashCanonical({})).toBe("44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a");
    expect(hashCanonical({ b: "é", a: 1 })).toBe(sha256Hex(new TextEncoder().encode('{"a":1,"b":"é"}')));
    expect(new TextDecoder().decode(canonicalBytes({ b: "€", a: [] }))).toBe('{"a":[],"b":"€"}');
  });
});

describe("refusals", () => {
  const cyclic = (): unknown => {
    const root: { a: { b: unknown[] } } = { a: { b: [] } };
    root.a.b.push(root);
    return root;
  };
  const cases: [string, () => unknown, string][] = [
    ["NaN", () => ({ a: [0, 1, NaN] }), "$.a[2]"],
    ["Infinity", () => ({ x: Infinity }), "$.x"],
    ["-Infinity", () => [-Infinity], "$[0]"],
    ["lone high surrogate", () => ({ s: "a\uD800" }), "$.s"],
    ["lone low surrogate", () => ["ok", "\uDC00x"], "$[1]"],
    ["reversed pair", () => ["\uDC00\uD800"], "$[0]"],
    ["lone surrogate in a key", () => ({ o: { ["\uD83D"]: 1 } }), '$.o["\\ud83d"]'],
    ["undefined", () => ({ u: undefined }), "$.u"],
    ["top-level undefined", () => undefined, "$"],
    ["function", () => ({ f: () => 1 }), "$.f"],
    ["symbol", () => [Symbol("s")], "$[0]"],
    ["bigint", () => ({ n: 1n }), "$.n"],
    ["Date", () => ({ d: new Date(0) }), "$.d"],
    ["Map", () => new Map(), "$"],
    ["Set", () => [new Set()], "$[0]"],
    ["RegExp", () => [/x/], "$[0]"],
    ["typed array", () => ({ "a b": new Uint8Array(2) }), '$["a b"]'],
    ["ArrayBuffer", () => ({ b: new ArrayBuffer(2) }), "$.b"],
    ["class instance", () => ({ c: new (class Point { x = 1 })() }), "$.c"],
    ["Array subclass", () => ({ c: new (class MyArray extends Array {})() }), "$.c"],
    ["boxed number", () => [Object(1)], "$[0]"],
    ["plain object with toJSON", () => ({ t: { toJSON: () => "x" } }), "$.t"],
    ["null-prototype object with toJSON", () => Object.assign(Object.create(null) as object, { toJSON: () => 1 }), "$"],
    ["sparse array", () => [1, , 3], "$[1]"], // eslint-disable-line no-sparse-arrays
    ["array with length but no elements", () => ({ a: new Array(3) }), "$.a[0]"],
    ["cycle", cyclic, "$.a.b[0]"],
  ];
  for (const [name, make, path] of cases) {
    it(`refuses ${name} with a TypeError naming ${path}`, () => {
      const value = make();
      expect(() => canonicalize(value)).toThrow(TypeError);
      expect(() => canonicalize(value)).toThrow(` at ${path} `);
    });
  }

  it("says what is wrong, not just where", () => {
    expect(() => canonicalize([1, , 3])).toThrow(/hole in a sparse array/); // eslint-disable-line no-sparse-arrays
    expect(() => canonicalize([undefined])).toThrow(/type undefined/);
    expect(() => canonicalize({ a: { b: NaN } })).toThrow(/the number NaN at \$\.a\.b /);
    expect(() => canonicalize(cyclic())).toThrow(/cycle/);
    expect(() => canonicalize({ d: new Date(0) })).toThrow(/non-plain object \(Date\)/);
    expect(() => canonicalize({ ["\uD800"]: 1 })).toThrow(/object key with a lone UTF-16 surrogate/);
  });

  it("refuses nesting deeper than MAX_DEPTH with a RangeError", () => {
    let v: unknown = 1;
    for (let i = 0; i <= MAX_DEPTH; i++) v = [v];
    expect(() => canonicalize(v)).toThrow(RangeError);
    expect(() => canonicalize(v)).toThrow(/nesting deeper than 1000 at \$\[0\]\[0\].*more/);
  });

  it("refuses through canonicalBytes and hashCanonical too", () => {
    expect(() => canonicalBytes({ a: NaN })).toThrow(TypeError);
    expect(() => hashCanonical([undefined])).toThrow(TypeError);
  });
});
