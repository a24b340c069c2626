// The capsule's gzip writer (_deflate.ts, fflate's deflate compiled to WebAssembly) gives fflate's bytes: the capsule
// format pins them (ARCHITECTURE "Capsule"), so any difference is a format change. Checked on every level and hash
// size, on inputs that reach every branch (empty and tiny inputs, stored/fixed/dynamic blocks, block splits by
// symbol count and by match count, long runs, the 32 KiB window), and the committed module against a fresh build.
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { gunzipSync, gzipSync } from "fflate";
import { describe, expect, it } from "vitest";
import { gzipLikeFflate } from "./_deflate.ts";
import { GZIP_OPTIONS, readArchive, writeArchive } from "./archive.ts";

/** Deterministic bytes (xorshift32). */
function bytes(n: number, kind: "random" | "small-alphabet" | "text" | "sparse" | "wave", seed = 1): Uint8Array {
  let x = seed >>> 0 || 1;
  const next = (): number => ((x ^= x << 13), (x ^= x >>> 17), (x ^= x << 5), x >>> 0);
  const out = new Uint8Array(n);
  const words = ["alpha ", "beta ", "gamma\n", '{"key":1}', "\0\0\0\0\0\0\0\0", "reach-wasm "];
  for (let i = 0; i < n; ) {
    if (kind === "random") out[i++] = next() & 255;
    else if (kind === "small-alphabet") out[i++] = 97 + (next() & 3);
    else if (kind === "sparse") out[i++] = i % 251 < 200 ? 0 : next() & 255;
    else if (kind === "wave") out[i++] = (Math.round(Math.sin(i / 50) * 60) + 128 + (next() & 7)) & 255;
    else for (const c of words[next() % words.length]!) if (i < n) out[i++] = c.charCodeAt(0);
  }
  return out;
}

const same = (data: Uint8Array, level: number, mem: number): void => {
  const want = gzipSync(data, { level: level as 6, mem: mem as 7, mtime: 0 });
  const got = gzipLikeFflate(data, level, mem);
  expect(got.length, `${data.length} bytes, level ${level}, mem ${mem}`).toBe(want.length);
  expect(Buffer.from(got).equals(Buffer.from(want)), `${data.length} bytes, level ${level}, mem ${mem}`).toBe(true);
};

describe("the capsule's gzip writer", () => {
  it("gives fflate's bytes for empty and tiny inputs, on every level", () => {
    for (let level = 1; level <= 9; level++) for (const n of [0, 1, 2, 3, 4, 5, 9, 258, 259]) same(bytes(n, "text", n + 1), level, 7);
  });

  it("gives fflate's bytes on every level and hash size (mem 0-12), for five kinds of data", () => {
    for (const kind of ["random", "small-alphabet", "text", "sparse", "wave"] as const) {
      const data = bytes(20_000, kind);
      for (let level = 1; level <= 9; level++) for (const mem of [0, 4, 7, 12]) same(data, level, mem);
    }
  });

  it("gives fflate's bytes around block boundaries: 423/424 bytes left, 24,576 symbols, 7,000 matches, the 32 KiB window", () => {
    for (const n of [423, 424, 425, 7_000, 24_576, 24_577, 32_767, 32_768, 32_769, 70_000]) for (const kind of ["random", "text", "sparse"] as const) same(bytes(n, kind, n), 6, 7);
  });

  it("gives fflate's bytes for megabytes: long runs, incompressible data, and both mixed", () => {
    const runs = bytes(2 << 20, "text");
    for (let i = 0; i < runs.length; i += 100_000) runs.fill(7, i, i + 50_000);
    for (const data of [new Uint8Array(3 << 20), bytes(1 << 20, "random"), runs, bytes(1 << 20, "wave")]) same(data, 6, 7);
    same(runs, 1, 7);
    same(runs, 9, 7);
  });

  it("is what writeArchive uses (GZIP_OPTIONS), and its output inflates back", () => {
    const entries = [{ path: "a.txt", bytes: bytes(5_000, "text") }, { path: "b/c.bin", bytes: bytes(3_000, "random") }];
    const gz = writeArchive(entries);
    expect(Buffer.from(gzipSync(gunzipSync(gz), GZIP_OPTIONS)).equals(Buffer.from(gz))).toBe(true);
    expect([...readArchive(gz)]).toEqual(entries.map((e) => [e.path, e.bytes]));
  });

  it("refuses a level or hash size fflate does not have", () => {
    for (const [level, mem] of [[0, 7], [10, 7], [1.5, 7], [6, -1], [6, 13], [Number.NaN, 7]] as const) {
      expect(() => gzipLikeFflate(new Uint8Array(1), level, mem)).toThrow(RangeError);
    }
  });

  it.skipIf(!existsSync("/usr/bin/clang"))("the committed module (src/capsule/_deflate-wasm.ts) is a fresh build of wasm-tools/deflate/deflate.c", () => {
    const r = spawnSync(process.execPath, ["scripts/gen-deflate-wasm.mjs", "--check"], { encoding: "utf8" });
    expect(r.stderr).toBe("");
    expect(r.status).toBe(0);
  });
});
