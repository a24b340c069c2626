/**
 * RFC 8785 (JCS) conformance cases: the cyberphone/json-canonicalization vectors under `vectors/jcs/`, the
 * number lines of `vectors/jcs/numbers.txt`, the published ES6 number-file prefix hash, and the values that
 * `canonicalize` must refuse. Runtime-neutral: file access comes from the runner's `ConformanceIO`.
 * @module
 */
import { canonicalize, MAX_DEPTH } from "../../src/canonical/jcs.ts";
import { bytesToHex } from "../../src/canonical/hex.ts";
import { sha256, sha256Hex, utf8 } from "../../src/canonical/sha256.ts";
import { check } from "./types.ts";
import type { ConformanceCase, ConformanceIO } from "./types.ts";

const DIR = "vectors/jcs";

/**
 * SHA-256 of the first N lines of upstream's `es6testfile100m.txt`, as published in
 * `vectors/jcs/README.upstream.md`.
 */
export const ES6_PREFIX_SHA256: Readonly<Record<number, string>> = {
  1000: "be18b62b6f69cdab33a7e0dae0d9cfa869fda80ddc712221570f9f40a5878687",
  10000: "b9f7a8e75ef22a835685a52ccba7f7d6bdc99e34b010992cbc5864cd12be6892",
  100000: "22776e6d4b49fa294a0d0f349268e5c28808fe7e0cb2bcbe28f63894e494d4c7",
};

/**
 * Build the JCS conformance cases.
 * @param io file access rooted at `conformance/`
 * @returns one case per vector file, one for `numbers.txt`, one for the 10,000-line ES6 prefix, and the refusals
 * @throws Error (from `io`) when the vector folder cannot be listed
 * @example for (const c of jcsCases(io)) c.run()
 */
export function jcsCases(io: ConformanceIO): ConformanceCase[] {
  const cases: ConformanceCase[] = [];
  for (const file of io.list(`${DIR}/input`)) {
    if (!file.endsWith(".json")) continue;
    const name = file.slice(0, -".json".length);
    cases.push({
      name: `jcs/vector/${name}`,
      run() {
        const got = utf8(canonicalize(JSON.parse(io.readText(`${DIR}/input/${file}`))));
        const want = io.readBytes(`${DIR}/output/${file}`);
        const wantHex = io.readText(`${DIR}/outhex/${name}.txt`).replace(/\s+/g, "").toLowerCase();
        check(bytesToHex(want) === wantHex, `vectors: output/${file} and outhex/${name}.txt disagree`);
        check(
          bytesToHex(got) === wantHex,
          `${name}: got ${JSON.stringify(new TextDecoder().decode(got))}, want ${JSON.stringify(new TextDecoder().decode(want))}`,
        );
        return sha256Hex(got);
      },
    });
  }

  cases.push({
    name: "jcs/numbers",
    run() {
      const lines = io.readText(`${DIR}/numbers.txt`).split("\n").filter((l) => l !== "");
      check(lines.length > 100, `numbers.txt: expected more than 100 lines, got ${lines.length}`);
      let produced = "";
      for (const line of lines) {
        const comma = line.indexOf(",");
        const hex = line.slice(0, comma);
        const want = line.slice(comma + 1);
        const value = doubleFromHex(hex);
        const got = canonicalize(value);
        check(got === want, `numbers.txt ${hex}: got ${got}, want ${want}`);
        check(canonicalize([value]) === `[${want}]`, `numbers.txt ${hex}: wrong inside an array`);
        produced += `${hex},${got}\n`;
      }
      return sha256Hex(produced);
    },
  });

  cases.push({
    name: "jcs/es6-numbers-10000",
    run() {
      const got = sha256Hex(es6NumberLines(10000));
      check(got === ES6_PREFIX_SHA256[10000], `ES6 number file, first 10000 lines: got SHA-256 ${got}`);
      return got;
    },
  });

  for (const r of refusals()) {
    cases.push({
      name: `jcs/refuse/${r.name}_fail`,
      run() {
        let thrown: unknown;
        try {
          canonicalize(r.make());
        } catch (err) {
          thrown = err;
        }
        check(thrown !== undefined, `${r.name}: canonicalize did not throw`);
        const want = r.range ? RangeError : TypeError;
        check(thrown instanceof want, `${r.name}: expected ${want.name}, got ${String(thrown)}`);
        const message = (thrown as Error).message;
        check(message.includes(` at ${r.path} `), `${r.name}: message does not name path ${r.path}: ${message}`);
        return sha256Hex(`${(thrown as Error).name}: ${message}`);
      },
    });
  }
  return cases;
}

/**
 * Regenerate the first `count` lines of upstream's ES6 number test file, with the expected column produced by
 * `canonicalize`. Follows upstream's `numgen.js`: 168 static values, 2000 serial values from the smallest
 * normal double up, then doubles read little-endian from a SHA-256 chain starting at 32 zero bytes (skipping
 * ±0, NaN and ±Infinity). Each line is `<bits as unpadded lowercase hex>,<serialisation>\n`.
 * @param count how many lines to produce
 * @returns the text of the lines
 * @throws RangeError when `count` is not a non-negative safe integer
 * @example sha256Hex(es6NumberLines(1000)) === ES6_PREFIX_SHA256[1000]
 */
export function es6NumberLines(count: number): string {
  if (!Number.isSafeInteger(count) || count < 0) {
    throw new RangeError(`"count" expected a non-negative safe integer, got ${count}`);
  }
  const scratch = new DataView(new ArrayBuffer(8));
  let block: Uint8Array = new Uint8Array(32);
  let blockView = new DataView(block.buffer);
  let blockPos = 32;
  const parts: string[] = [];
  for (let idx = 0; idx < count; idx++) {
    let f: number;
    if (idx < STATIC_BITS.length) {
      f = doubleFromHex(STATIC_BITS[idx]!);
    } else if (idx < STATIC_BITS.length + 2000) {
      scratch.setBigUint64(0, 0x0010000000000000n + BigInt(idx - STATIC_BITS.length));
      f = scratch.getFloat64(0);
    } else {
      f = 0;
      while (f === 0 || !Number.isFinite(f)) {
        if (blockPos === 32) {
          block = sha256(block);
          blockView = new DataView(block.buffer, block.byteOffset, 32);
          blockPos = 0;
        }
        f = blockView.getFloat64(blockPos, true);
        blockPos += 8;
      }
    }
    scratch.setFloat64(0, f);
    parts.push(`${scratch.getBigUint64(0).toString(16)},${canonicalize(f)}\n`);
  }
  return parts.join("");
}

/** Parse 1–16 hex digits of IEEE-754 bits into a double. */
function doubleFromHex(hex: string): number {
  check(/^[0-9a-f]{1,16}$/.test(hex), `expected 1-16 lowercase hex digits, got ${JSON.stringify(hex)}`);
  const view = new DataView(new ArrayBuffer(8));
  view.setBigUint64(0, BigInt("0x" + hex));
  return view.getFloat64(0);
}

type Refusal = { name: string; path: string; range?: boolean; make: () => unknown };

function refusals(): Refusal[] {
  const nest = (depth: number): unknown => {
    let v: unknown = 0;
    for (let i = 0; i < depth; i++) v = [v];
    return v;
  };
  return [
    { name: "nan", path: "$.a[2]", make: () => ({ a: [0, 1, NaN] }) },
    { name: "infinity", path: "$.x", make: () => ({ x: Infinity }) },
    { name: "negative_infinity", path: "$[0]", make: () => [-Infinity] },
    { name: "lone_high_surrogate", path: "$.s", make: () => ({ s: "a\uD800b" }) },
    { name: "lone_low_surrogate", path: "$[1]", make: () => ["ok", "\uDC00"] },
    { name: "lone_surrogate_key", path: '$["k\\ud800"]', make: () => ({ ["k\uD800"]: 1 }) },
    { name: "undefined", path: "$.u", make: () => ({ u: undefined }) },
    { name: "function", path: "$.f", make: () => ({ f: () => 1 }) },
    { name: "symbol", path: "$[0]", make: () => [Symbol("s")] },
    { name: "bigint", path: "$.n", make: () => ({ n: 1n }) },
    { name: "date", path: "$.d", make: () => ({ d: new Date(0) }) },
    { name: "map", path: "$", make: () => new Map() },
    { name: "set", path: "$", make: () => new Set() },
    { name: "regexp", path: "$[0]", make: () => [/x/] },
    { name: "typed_array", path: "$.b", make: () => ({ b: new Uint8Array(2) }) },
    { name: "class_instance", path: "$.c", make: () => ({ c: new (class Point { x = 1 })() }) },
    { name: "boxed_string", path: "$", make: () => Object("s") },
    { name: "to_json", path: "$.t", make: () => ({ t: { toJSON: () => "x" } }) },
    { name: "sparse_array", path: "$[1]", make: () => [1, , 3] }, // eslint-disable-line no-sparse-arrays
    {
      name: "cycle",
      path: "$.a.b[0]",
      make: () => {
        const root: { a: { b: unknown[] } } = { a: { b: [] } };
        root.a.b.push(root);
        return root;
      },
    },
    { name: "too_deep", path: "$[0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0]…(976 more)…[0][0][0][0][0][0][0][0]", range: true, make: () => nest(MAX_DEPTH + 1) },
  ];
}

/** The 168 `staticU64s` of upstream's number generator (see `vectors/jcs/README.upstream.md`). */
const STATIC_BITS: readonly string[] = `
0000000000000000 8000000000000000 0000000000000001 8000000000000001 c46696695dbd1cc3 c43211ede4974a35
c3fce97ca0f21056 c3c7213080c1a6ac c39280f39a348556 c35d9b1f5d20d557 c327af4c4a80aaac c2f2f2a36ecd5556
c2be51057e155558 c28840d131aaaaac c253670dc1555557 c21f0b4935555557 c1e8d5d42aaaaaac c1b3de4355555556
c17fca0555555556 c1496e6aaaaaaaab c114585555555555 c0e046aaaaaaaaab c0aa0aaaaaaaaaaa c074d55555555555
c040aaaaaaaaaaab c00aaaaaaaaaaaab bfd5555555555555 bfa1111111111111 bf6b4e81b4e81b4f bf35d867c3ece2a5
bf0179ec9cbd821e becbf647612f3696 be965e9f80f29212 be61e54c672874db be2ca213d840baf8 bdf6e80fe033c8c6
bdc2533fe68fd3d2 bd8d51ffd74c861c bd5774ccac3d3817 bd22c3d6f030f9ac bcee0624b3818f79 bcb804ea293472c7
bc833721ba905bd3 bc4ebe9c5db3c61e bc18987d17c304e5 bbe3ad30dfcf371d bbaf7b816618582f bb792f9ab81379bf
bb442615600f9499 bb101e77800c76e1 bad9ca58cce0be35 baa4a1e0a3e6fe90 ba708180831f320d ba3a68cd9e985016
446696695dbd1cc3 443211ede4974a35 43fce97ca0f21056 43c7213080c1a6ac 439280f39a348556 435d9b1f5d20d557
4327af4c4a80aaac 42f2f2a36ecd5556 42be51057e155558 428840d131aaaaac 4253670dc1555557 421f0b4935555557
41e8d5d42aaaaaac 41b3de4355555556 417fca0555555556 41496e6aaaaaaaab 4114585555555555 40e046aaaaaaaaab
40aa0aaaaaaaaaaa 4074d55555555555 4040aaaaaaaaaaab 400aaaaaaaaaaaab 3fd5555555555555 3fa1111111111111
3f6b4e81b4e81b4f 3f35d867c3ece2a5 3f0179ec9cbd821e 3ecbf647612f3696 3e965e9f80f29212 3e61e54c672874db
3e2ca213d840baf8 3df6e80fe033c8c6 3dc2533fe68fd3d2 3d8d51ffd74c861c 3d5774ccac3d3817 3d22c3d6f030f9ac
3cee0624b3818f79 3cb804ea293472c7 3c833721ba905bd3 3c4ebe9c5db3c61e 3c18987d17c304e5 3be3ad30dfcf371d
3baf7b816618582f 3b792f9ab81379bf 3b442615600f9499 3b101e77800c76e1 3ad9ca58cce0be35 3aa4a1e0a3e6fe90
3a708180831f320d 3a3a68cd9e985016 4024000000000000 4014000000000000 3fe0000000000000 3fa999999999999a
3f747ae147ae147b 3f40624dd2f1a9fc 3f0a36e2eb1c432d 3ed4f8b588e368f1 3ea0c6f7a0b5ed8d 3e6ad7f29abcaf48
3e35798ee2308c3a 3ed539223589fa95 3ed4ff26cd5a7781 3ed4f95a762283ff 3ed4f8c60703520c 3ed4f8b72f19cd0d
3ed4f8b5b31c0c8d 3ed4f8b58d1c461a 3ed4f8b5894f7f0e 3ed4f8b588ee37f3 3ed4f8b588e47da4 3ed4f8b588e3849c
3ed4f8b588e36bb5 3ed4f8b588e36937 3ed4f8b588e368f8 3ed4f8b588e368f1 3ff0000000000000 bff0000000000000
bfeffffffffffffa bfeffffffffffffb 3feffffffffffffa 3feffffffffffffb 3feffffffffffffc 3feffffffffffffe
bfefffffffffffff bfefffffffffffff 3fefffffffffffff 3fefffffffffffff 3fd3333333333332 3fd3333333333333
3fd3333333333334 0010000000000000 000ffffffffffffd 000fffffffffffff 7fefffffffffffff ffefffffffffffff
4340000000000000 c340000000000000 4430000000000000 44b52d02c7e14af5 44b52d02c7e14af6 44b52d02c7e14af7
444b1ae4d6e2ef4e 444b1ae4d6e2ef4f 444b1ae4d6e2ef50 3eb0c6f7a0b5ed8c 3eb0c6f7a0b5ed8d 41b3de4355555553
41b3de4355555554 41b3de4355555555 41b3de4355555556 41b3de4355555557 becbf647612f3696 43143ff3c1cb0959
`
  .trim()
  .split(/\s+/);
